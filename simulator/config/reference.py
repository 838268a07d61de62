"""The system key reference of ``configs/README.md``, rendered from the schema.

The guide's key reference is the list ``offsim keys`` prints (``describe_spec(SystemSpec)``: each key as
``--set`` takes it, its SI unit, default, accepted values and description) as Markdown tables, one per
section and one per accelerator kind. It sits between the two marker lines below; a test compares the
committed text with this rendering, so the guide cannot drift from the schema. After a schema change,
``update_guide(path)`` rewrites the section in place.
"""

from __future__ import annotations

from pathlib import Path

from simulator.config.fields import KeyDoc, describe_spec, did_you_mean
from simulator.config.schema import SystemSpec

BEGIN = "<!-- key reference: generated from the schema by simulator.config.reference; do not edit by hand -->"
END = "<!-- end of the generated key reference -->"
HEADER = "| key | unit | default | accepts | description |\n|---|---|---|---|---|"
#: the part of a schema key that stands for the name of a list item or mapping entry (``caches.levels.<name>``)
ITEM = "<name>"


def _kind(row: KeyDoc) -> str:
    """The accelerator kind a row belongs to ("" for keys every kind has)."""
    return row.doc[1:row.doc.index("]")] if row.doc.startswith("[") else ""


def _table_row(row: KeyDoc) -> str:
    doc = row.doc.split("] ", 1)[1] if _kind(row) else row.doc
    cells = (f"`{row.key}`", row.unit, row.default, row.accepts, doc)
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def reference_markdown() -> str:
    """The key reference as Markdown: a table per top-level section, accelerators by kind after their common keys."""
    groups: dict[str, list[KeyDoc]] = {}
    for row in describe_spec(SystemSpec):
        section = row.key.split(".")[0]
        title = f"{section}, kind `{_kind(row)}`" if _kind(row) else section
        groups.setdefault(title, []).append(row)
    parts = [f"#### {title}\n\n{HEADER}\n" + "\n".join(_table_row(r) for r in rows)
             for title, rows in groups.items()]
    return "\n\n".join(parts)


def committed_reference(text: str, source: str) -> str:
    """The generated section of guide ``text`` (named ``source``), without its marker lines."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"{source}: expected one key reference between the lines {BEGIN!r} and {END!r}")
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip("\n")


def update_guide(path: Path | str) -> bool:
    """Rewrite the key reference of the guide at ``path`` from the schema; True if the text changed."""
    path = Path(path)
    text = path.read_text()
    old = committed_reference(text, str(path))
    new = reference_markdown()
    if old == new:
        return False
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    path.write_text(text[:start] + "\n\n" + new + "\n\n" + text[end:])
    return True


def key_in(key: str, prefix: str) -> bool:
    """Whether dotted ``key`` is ``prefix`` or a key of section ``prefix``, as ``--set`` spells keys: a part
    ``<name>`` of ``key`` matches the name (or index) of an item in its place (``caches.levels.L1D``)."""
    want, have = prefix.rstrip(".").split("."), key.split(".")
    return len(want) <= len(have) and all(w == h or h == ITEM for w, h in zip(want, have))


def named_as(key: str, prefix: str) -> str:
    """``key`` of section ``prefix`` (``key_in``) with each ``<name>`` that ``prefix`` fills spelled as there."""
    want = prefix.rstrip(".").split(".")
    return ".".join(want + key.split(".")[len(want):])


def key_forms(keys: list[str], prefix: str) -> str:
    """The keys that exist where ``prefix`` names none, for a message: what the longest section ``prefix``
    starts with holds ("caches.levels.<name> holds: latency_cycles, name, ..."), else the top-level sections."""
    want = prefix.rstrip(".").split(".")
    for n in range(len(want) - 1, 0, -1):
        head = ".".join(want[:n])
        below = sorted({k.split(".")[n] for k in keys if key_in(k, head) and k.count(".") >= n})
        if below:
            return f"{head} holds: {', '.join(below)}{did_you_mean(want[n], below)}"
    return f"sections: {', '.join(sorted({k.split('.')[0] for k in keys}))}"
