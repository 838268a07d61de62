"""004 app. C.2's area figures of the Maxwell GPUs, recomputed by ``models.gpu_area`` from the constants 004 gives.

The constants are 004's: the Cacti-fitted memory lines (004:L3925-3937), the vector-unit logic and the
overhead region measured on the GTX980's die photograph (004:L3957-3960: 102.65 mm^2 over 16 SMs). The chips:
Table A.2 (004:L2431-2434) gives n_SM, n_V, the shared memory and 65536 32-bit registers per SM (2 KiB per
vector unit, the GTX980's 512 registers a unit, 004:L3849); the L2 is 2 MB on the GTX980 and 3 MB on the Titan X
(004:L3855). 004 gives the L1 for the GTX980 only (004:L3907) and its L1 line is fitted per SM pair
(004:L3934-3935); its printed L1 prediction, 7.78 mm^2 (004:L3956), is the line at 48 KiB, so a pair holds 48 KiB
here, on both Maxwell chips. Areas in mm^2.
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


def claims() -> dict[tuple[str, str, str], float]:
    """Ours for each app. C.2 entry of ``results/reference/prajapati_stencil.csv`` (mm^2)."""
    c = MAXWELL_004
    blocks = {"L2 area": l2_area_mm2(c, GTX980),
              "L1 area per SM pair": c.l1_pair.area_mm2(GTX980.l1_kib_per_sm_pair),
              "shared memory area per SM": c.shared_memory.area_mm2(GTX980.shared_kib_per_sm)}
    out = {("004 §C.2.2", "GTX980", f"{block}, {source}"): area for block, area in blocks.items()
           for source in ("linear model", "die photograph")}
    out[("004 §C.2.2", "GTX980", "die area")] = die_area_mm2(c, GTX980)
    out[("004 §C.2.3", "Titan X", "die area, model")] = die_area_mm2(c, TITAN_X)
    out[("004 §C.2.3", "Titan X", "die area, published")] = die_area_mm2(c, TITAN_X)
    return out
