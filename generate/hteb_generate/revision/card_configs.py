"""Every config a revision's dataset card declares, loaded as a user loads it (`datasets.load_dataset`),
before the revision is published: a card that lists a split twice, points at a file that is not there,
or joins files `datasets` cannot cast into one split is refused in one line, and the staged revision
is never published. noise-1339 was published with all 32 configs failing for a split listed twice;
the schema cannot see that, only `datasets` can. Loading is cheap next to making a revision (the
419k records of noise2-1339's 32 configs load in ~4 s on 2 cores)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hteb_contract.errors import ContractError, first_line
from hteb_contract.revision import CARD


def declared_configs(folder: Path) -> list[str]:
    """The config names the card's front matter declares, in its order."""
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(Path(folder) / CARD)
    configs = card.data.to_dict().get("configs") or []
    names = [c["config_name"] for c in configs if isinstance(c, dict) and isinstance(c.get("config_name"), str)]
    if not names or len(names) != len(configs):
        raise ContractError(f"{folder / CARD}: its front matter declares no configs datasets can read")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # datasets loads either; the Hub's viewer shows one
        raise ContractError(f"{folder / CARD}: config {twice[0]!r} is declared twice")
    return names


def check_configs_load(folder: Path) -> int:
    """Load each declared config of the revision in `folder` with `datasets`; the number of configs
    loaded, or a one-line ContractError saying why they do not load (datasets checks every config's
    files when it resolves one, so the config named is where loading stopped, not always the one at fault)."""
    import datasets
    from datasets.utils.logging import disable_progress_bar, enable_progress_bar, is_progress_bar_enabled

    names = declared_configs(folder)
    shown = is_progress_bar_enabled()
    disable_progress_bar()
    try:
        with tempfile.TemporaryDirectory(prefix="hteb-card-check-") as cache:
            for name in names:
                try:
                    datasets.load_dataset(str(folder), name, cache_dir=cache)
                except Exception as err:  # whatever datasets raises is the card's fault: refuse it
                    root = _root_cause(err)
                    raise ContractError(
                        f"{folder / CARD}: its configs do not load with datasets.load_dataset (stopped at "
                        f"{name!r}: {type(root).__name__}: {first_line(root)[:300]})"
                    ) from None
    finally:
        if shown:
            enable_progress_bar()
    return len(names)


def _root_cause(err: BaseException) -> BaseException:
    """What went wrong under datasets' wrappers ("An error occurred while generating the dataset")."""
    while err.__cause__ is not None:
        err = err.__cause__
    return err
