"""A dataset revision on disk: what it holds, how it is sealed, how it is opened and verified.

Layout (also what `datasets.load_dataset(repo, config, revision=...)` reads on the Hub)::

    README.md                          dataset card: Hub metadata and configs (hteb_contract.card)
    eval.yaml                          the benchmark's task ids for Hub evaluation results (hub_eval.py)
    manifest.json                      hteb_contract/json/manifest.v2.schema.json; sha256 of every other file
    data/<Dataset>/<transformation>_<seed>.parquet   item records (hteb_contract/json/item.v3.schema.json)
    corpus/<Dataset>/<transformation>_<seed>.parquet perturbed corpus documents (opt-in, retrieval only; same schema)
    source/<Dataset>/dataset.json      the untouched source: metadata ...
    source/<Dataset>/<table>.parquet   ... and its tables (test, train, corpus, queries, qrels, ...)

A revision is untrusted input when read: paths are checked to stay inside the folder, every
file is checked against the manifest's sha256, and data is read only as parquet and JSON. A
hash only says the files are the ones sealed, not that what was sealed is sound, so the reader
also checks content: the layout the manifest declares (`load_manifest`), each source copy
(`Revision.source`) and, in one pass per items file, every record (`Revision.items`): the item
schema (finite numbers), the file it sits in, a text of the source, one record per text.
`Revision.check_content` runs those checks over every file of the opened datasets (`verify`).
Each items file is checked with Arrow compute (`columnar`, and a lookup of each record's source
text; `check_content` checks a dataset's files as one table);
only a file those checks cannot clear is checked record by record, which words the refusal, so
a refusal reads the same whichever path found it. The writer does the same, given records
(`write_items`, an LLM's) or item tables made in bulk (`write_item_tables`, the noise rules').
`Revision.item_columns` gives the scorer what it uses of the same records, checked the same way,
without a record per row; a file cleared once is read again (the scorer reads each dataset twice)
without its checks, its bytes hashed against the manifest as on every read.

The manifest's `change_shares` (`change_shares.py`) records, per items file and subset, how many texts
the transformation changed (and, for a Noise rule, whether it applies to the subset's script); the
writer computes them as it seals, `check_content` recounts them from the files.

Corpus records (`hteb-generate --corpus-noise`) are a part of their own: a retrieval dataset's
corpus titles and texts under a noise rule, read only by `Revision.corpus_items` (the scorer's
`--corpus-robustness`), never mixed into the items a variant is scored on. The manifest's
`corpus_perturbed` says whether a revision has them; a revision without the key has none.

Manifest fields added after the first revisions were published carry a stated default
(`MANIFEST_DEFAULTS`): a revision that lacks one means that default, so a field a later writer adds
never makes an older revision differ from its regeneration (`hteb_contract.reproduction`).
"""

from hteb_contract.revision.item_checks import check_row
from hteb_contract.revision.layout import (
    CARD,
    CORPUS_TASK_TYPES,
    EVAL,
    MANIFEST,
    MANIFEST_DEFAULTS,
    PARTS,
    Progress,
    Variant,
    corpus_path,
    dataset_of,
    items_path,
    parse_split,
    quiet,
    safe_relpath,
    split_name,
    variant_of,
    with_defaults,
)
from hteb_contract.revision.manifest import (
    config_hash,
    content_hash,
    disk_files,
    file_entries,
    load_manifest,
    parquet_rows,
    seal,
)
from hteb_contract.revision.read import Checked, Revision
from hteb_contract.revision.write import (
    CHECK_ROWS,
    manifest_source,
    source_tables,
    write_item_table,
    write_item_tables,
    write_items,
    write_revision,
)

__all__ = [
    "CARD",
    "CHECK_ROWS",
    "CORPUS_TASK_TYPES",
    "Checked",
    "EVAL",
    "MANIFEST",
    "MANIFEST_DEFAULTS",
    "PARTS",
    "Progress",
    "Revision",
    "Variant",
    "check_row",
    "config_hash",
    "content_hash",
    "corpus_path",
    "dataset_of",
    "disk_files",
    "file_entries",
    "items_path",
    "load_manifest",
    "manifest_source",
    "parquet_rows",
    "parse_split",
    "quiet",
    "safe_relpath",
    "seal",
    "source_tables",
    "split_name",
    "variant_of",
    "with_defaults",
    "write_item_table",
    "write_item_tables",
    "write_items",
    "write_revision",
]
