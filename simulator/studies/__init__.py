"""Studies: sweeps of simulated points and the paper reproductions built on them.

The generic sweep engine (``sweep``: expand a study file, run its points on a local pool or
Dask, resume by content hash; ``report``: its table, figures and report), the cross-checks
each workload is compared with (``crosschecks``), and one module or package per paper study
(``fmm``, ``logca``, ``stencil``, ``roofline``), each a plug-in of one interface (``plugin``) that
the same engine runs (``plugin_run``). Studies import the engine; the engine never imports a study
(it finds them through the registry ``plugin.STUDY_KINDS``).
"""
