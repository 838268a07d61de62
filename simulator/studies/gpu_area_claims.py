"""004 app. C.2's area figures of the Maxwell GPUs, recomputed by ``models.gpu_area`` from the constants 004 gives.

The constants are 004's: the Cacti-fitted memory lines (004:L3925-3937), the vector-unit logic and the
overhead region measured on the GTX980's die photograph (004:L3957-3960: 102.65 mm^2 over 16 SMs). The chips:
Table A.2 (004:L2431-2434) gives n_SM, n_V, the shared memory and 65536 32-bit registers per SM (2 KiB per
vector unit, the GTX980's 512 registers a unit, 004:L3849); the L2 is 2 MB on the GTX980 and 3 MB on the Titan X
(004:L3855). 004 gives the L1 for the GTX980 only (004:L3907) and its L1 line is fitted per SM pair
(004:L3934-3935); its printed L1 prediction, 7.78 mm^2 (004:L3956), is the line at 48 KiB, so a pair holds 48 KiB
here, on both Maxwell chips. Areas in mm^2.

Section C.4.1 deletes the caches (the L1 pairs and the L2, whole blocks) from both dies (004:L4197-4199), and
Table C.2 (004:L4209-4214) prints the area of the best cache-less design for each stencil, given by its n_SM,
n_V and shared memory per SM; the register file stays 2 KiB per vector unit, as on the Maxwell chips (004 varies
n_SM, n_V and the shared memory only, 004:L3521-3523).
"""

from __future__ import annotations

from models.gpu_area import AreaCoefficients, GpuFloorplan, LinearArea, die_area_mm2, l2_area_mm2

MAXWELL_004 = AreaCoefficients(
    vector_unit_mm2=0.04282,  # 004:L3957
    register_file=LinearArea(0.004305, 0.001947),  # 004:L3926
    shared_memory=LinearArea(0.01565, 0.09281),  # 004:L3930
    l1_pair=LinearArea(0.1604, 0.08204),  # 004:L3935-3936
    l2_slice=LinearArea(0.04197, 0.7685),  # 004:L3937
    overhead_per_sm_mm2=102.65 / 16,  # 004:L3959-3960
)
REGISTER_FILE_KIB_PER_VU = 65536 * 4 / 128 / 1024  # 65536 32-bit registers per SM over 128 vector units
GTX980 = GpuFloorplan(16, 128, REGISTER_FILE_KIB_PER_VU, 96, 48, 2048)
TITAN_X = GpuFloorplan(24, 128, REGISTER_FILE_KIB_PER_VU, 96, 48, 3072)
#: 004 Table C.2's cache-less designs (004:L4209-4214): stencil -> (n_SM, n_V, shared memory per SM in KiB)
TABLE_C2_DESIGNS = {"Jacobi 2D": (32, 128, 24), "Heat 2D": (22, 256, 12), "Gradient 2D": (28, 160, 24),
                    "Laplacian 2D": (28, 160, 12), "Heat 3D": (18, 288, 192), "Laplacian 3D": (8, 896, 96)}


def cacheless_area_mm2(c: AreaCoefficients, gpu: GpuFloorplan) -> float:
    """Die area of eq. C.6 less the L1 pairs and the L2, whole blocks (mm^2): section C.4.1's cache-less chip."""
    return die_area_mm2(c, gpu) - gpu.n_sm / 2 * c.l1_pair.area_mm2(gpu.l1_kib_per_sm_pair) - l2_area_mm2(c, gpu)


def claims() -> dict[tuple[str, str, str], float]:
    """Ours for each app. C.2 and C.4 area entry of ``results/reference/prajapati_stencil.csv`` (mm^2)."""
    c = MAXWELL_004
    blocks = {"L2 area": l2_area_mm2(c, GTX980),
              "L1 area per SM pair": c.l1_pair.area_mm2(GTX980.l1_kib_per_sm_pair),
              "shared memory area per SM": c.shared_memory.area_mm2(GTX980.shared_kib_per_sm)}
    out = {("004 §C.2.2", "GTX980", f"{block}, {source}"): area for block, area in blocks.items()
           for source in ("linear model", "die photograph")}
    out[("004 §C.2.2", "GTX980", "die area")] = die_area_mm2(c, GTX980)
    out[("004 §C.2.3", "Titan X", "die area, model")] = die_area_mm2(c, TITAN_X)
    out[("004 §C.2.3", "Titan X", "die area, published")] = die_area_mm2(c, TITAN_X)
    for name, chip in (("GTX980", GTX980), ("Titan X", TITAN_X)):
        out[("004 §C.4.1", name, "die area without caches")] = cacheless_area_mm2(c, chip)
    for stencil, (n_sm, n_v, shared_kib) in TABLE_C2_DESIGNS.items():
        design = GpuFloorplan(n_sm, n_v, REGISTER_FILE_KIB_PER_VU, shared_kib, 0, 0)
        out[("004 Table C.2", stencil, "area")] = cacheless_area_mm2(c, design)
    return out
