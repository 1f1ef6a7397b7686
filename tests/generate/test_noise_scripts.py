"""Noise rules version 2 reach every script the registry holds (issue 34): each rule, on a sample of
every language subset of the registry's datasets (real text where shared/data has the dataset:
SemRel2024 and MasakhaNEWS; otherwise one sentence written in the subset's script, drawn under 20
keys), changes at least APPLIED_SHARE of the texts where the table (specs/noise_scripts.yaml)
declares it applicable, and none where it declares it not applicable. Version 1 stays noise-1339's."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from hteb_contract.specs.datasets import dataset_specs
from hteb_contract.specs.noise_scripts import (
    APPLIED_SHARE,
    TABLE_END,
    TABLE_START,
    markdown_table,
    noise_scripts,
    text_script,
)
from hteb_generate.transform.noise import (
    CURRENT_RULES,
    FIRST_RULES,
    PERTURBATIONS,
    RULE_SETS,
    definitions_hash,
    perturb,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = 40
KEYS = 20
#: A sentence in each script (and in the languages with a national Latin layout), where no real text is at hand.
SENTENCES = {
    "Latn": "This morning the students read a new history book together in the library.",
    "fra": "Ce matin, les étudiants ont lu ensemble un nouveau livre d'histoire à la bibliothèque.",
    "deu": "Heute Morgen lasen die Studenten in der Bibliothek gemeinsam ein neues Geschichtsbuch.",
    "Arab": "ذهب الطالب إلى المكتبة صباح اليوم لقراءة كتاب جديد عن تاريخ المدينة القديمة.",
    "Hang": "오늘 아침 학생들은 도서관에서 새로운 역사 책을 함께 읽었습니다.",
    "Jpan": "今日の朝、学生たちは図書館で新しい歴史の本を一緒に読みました。",
    "Deva": "आज सुबह छात्रों ने पुस्तकालय में साथ मिलकर इतिहास की एक नई किताब पढ़ी।",
    "Beng": "আজ সকালে ছাত্ররা গ্রন্থাগারে একসাথে একটি নতুন ইতিহাসের বই পড়েছে।",
    "Gujr": "આજે સવારે વિદ્યાર્થીઓએ પુસ્તકાલયમાં સાથે મળીને ઇતિહાસનું નવું પુસ્તક વાંચ્યું.",
    "Guru": "ਅੱਜ ਸਵੇਰੇ ਵਿਦਿਆਰਥੀਆਂ ਨੇ ਲਾਇਬ੍ਰੇਰੀ ਵਿੱਚ ਇਕੱਠੇ ਇਤਿਹਾਸ ਦੀ ਨਵੀਂ ਕਿਤਾਬ ਪੜ੍ਹੀ।",
    "Knda": "ಇಂದು ಬೆಳಿಗ್ಗೆ ವಿದ್ಯಾರ್ಥಿಗಳು ಗ್ರಂಥಾಲಯದಲ್ಲಿ ಒಟ್ಟಿಗೆ ಇತಿಹಾಸದ ಹೊಸ ಪುಸ್ತಕವನ್ನು ಓದಿದರು.",
    "Mlym": "ഇന്ന് രാവിലെ വിദ്യാർത്ഥികൾ ലൈബ്രറിയിൽ ഒരുമിച്ച് ചരിത്രത്തിന്റെ പുതിയ പുസ്തകം വായിച്ചു.",
    "Orya": "ଆଜି ସକାଳେ ଛାତ୍ରମାନେ ପାଠାଗାରରେ ଏକାଠି ଇତିହାସର ଏକ ନୂଆ ବହି ପଢ଼ିଲେ।",
    "Taml": "இன்று காலை மாணவர்கள் நூலகத்தில் ஒன்றாக வரலாற்றின் புதிய புத்தகத்தைப் படித்தனர்.",
    "Telu": "ఈ రోజు ఉదయం విద్యార్థులు గ్రంథాలయంలో కలిసి చరిత్ర గురించి కొత్త పుస్తకం చదివారు.",
    "Ethi": "ዛሬ ጠዋት ተማሪዎቹ በቤተ መጻሕፍት ውስጥ አብረው ስለ ታሪክ አዲስ መጽሐፍ አነበቡ።",
    "Cyrl": "Сегодня утром студенты вместе читали в библиотеке новую книгу об истории города.",
    "Grek": "Σήμερα το πρωί οι φοιτητές διάβασαν μαζί στη βιβλιοθήκη ένα νέο βιβλίο ιστορίας.",
    "Hebr": "הבוקר קראו הסטודנטים יחד בספרייה ספר חדש על ההיסטוריה של העיר.",
}
NATIONAL = {"fr": "fra", "fra": "fra", "de": "deu", "deu": "deu"}
REAL = {"SemRel2024": ("sentence1", "sentence2"), "MasakhaNEWS": ("text",)}


def _real_texts(shared_data: Path) -> dict[tuple[str, str], list[str]]:
    texts: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, fields in REAL.items():
        for line in (shared_data / name / "test.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for field in fields:
                if len(texts[name, row["lang"]]) < SAMPLE:
                    texts[name, row["lang"]].append(row[field])
    return texts


def _samples(shared_data: Path):
    """(dataset, subset, language, texts, keys per text) for every language position of every subset."""
    real = _real_texts(shared_data)
    for spec in dataset_specs():
        for subset, positions in (spec.stats or {}).items():
            parts = subset.split("-")
            for at, position in enumerate(positions):
                code = parts[at] if len(parts) == len(positions) else subset
                language = NATIONAL.get(code)
                if (spec.name, subset) in real:
                    yield spec.name, subset, subset, real[spec.name, subset], 1
                else:
                    yield spec.name, subset, language, [SENTENCES[language or position.script]], KEYS


def _touchable(rule: str, text: str) -> bool:
    """punctuation_casing_loss can change only a text with punctuation, upper case or repeated spaces."""
    return rule != "punctuation_casing_loss" or perturb(rule, text, key=(0,)) != text


def test_every_rule_changes_the_texts_of_every_subset_it_is_declared_to_apply_to(shared_data):
    table = noise_scripts()
    short, wrongly = [], []
    samples = list(_samples(shared_data))
    assert {s[0] for s in samples} >= {"SemRel2024", "MasakhaNEWS", "STS17", "IndicCrosslingualSTS"}
    for name, subset, language, texts, keys in samples:
        for rule in PERTURBATIONS.names():
            by_script: dict[str | None, list[bool]] = defaultdict(list)
            for text in texts:
                if not _touchable(rule, text):
                    continue
                for k in range(keys):
                    by_script[text_script(text)].append(
                        perturb(rule, text, key=(k, name, rule, text), language=language) != text
                    )
            for script, changed in by_script.items():
                share = sum(changed) / len(changed)
                if table.applies(rule, script) and share < APPLIED_SHARE:
                    short.append(f"{name}/{subset} {script} {rule}: {share:.2f}")
                if not table.applies(rule, script) and share > 0:
                    wrongly.append(f"{name}/{subset} {script} {rule}: {share:.2f}")
    assert not short, f"applicable rules changing under {APPLIED_SHARE:.0%} of texts: {short}"
    assert not wrongly, f"rules declared not applicable that change texts: {wrongly}"


def test_the_script_comes_from_the_characters_not_the_declared_subset_script(shared_data):
    """mteb declares MasakhaNEWS `orm` Ethiopic; Oromo is written in Latin letters, and the rules type it so."""
    spec = next(s for s in dataset_specs() if s.name == "MasakhaNEWS")
    assert spec.stats["orm"][0].script == "Ethi"
    texts = _real_texts(shared_data)["MasakhaNEWS", "orm"]
    assert {text_script(t) for t in texts} == {"Latn"}


def test_national_layouts_type_french_on_azerty_and_german_on_qwertz():
    table = noise_scripts()
    assert set(table.neighbours("Latn", "fra")["q"]) == {"a", "z", "s", "w"}
    assert "ü" in table.neighbours("Latn", "deu")["p"] and "z" in table.neighbours("Latn", "deu")["u"]
    assert "y" in table.neighbours("Latn", "eng")["t"] and "y" not in table.neighbours("Latn", "deu")["t"]


def test_version_2_is_version_1_on_english_and_version_1_is_noise_1339s(shared_data):
    published = json.loads((ROOT / "docs" / "revisions" / "noise-1339" / "manifest.json").read_text(encoding="utf-8"))
    assert published["config"]["noise_rules_sha256"] == definitions_hash(FIRST_RULES) != definitions_hash()
    texts = _real_texts(shared_data)["MasakhaNEWS", "eng"]
    for rule in PERTURBATIONS.names():
        for text in texts:
            key = (1339, "MasakhaNEWS", rule, text)
            assert perturb(rule, text, key=key, language="eng") == perturb(rule, text, key=key, rules=FIRST_RULES)
    arabic = SENTENCES["Arab"]
    assert perturb("keyboard_typos", arabic, key=(3,), rules=FIRST_RULES) == arabic
    assert perturb("keyboard_typos", arabic, key=(3,)) != arabic


def test_noise_1339s_config_is_rules_version_1s_and_a_new_run_is_noise3_1339s(shared_data, tmp_path):
    """A new run names the newest rules version, and its configuration is the published noise3-1339's."""
    from hteb_generate.setup.config import build_config

    published = json.loads((ROOT / "docs" / "revisions" / "noise-1339" / "manifest.json").read_text(encoding="utf-8"))
    paths = {"data_dir": str(shared_data), "store": str(tmp_path / "store"), "cache_dir": str(tmp_path / "cache")}
    old = build_config(
        seed="1339", profile="noise", overrides={**paths, "noise_rules": FIRST_RULES, "record_specs": False}
    )  # as it was made
    assert "noise_rules" not in old.content_config() and old.config_hash() == published["config_hash"]
    new = build_config(seed="1339", profile="noise", overrides=paths)
    assert new.content_config()["noise_rules"] == CURRENT_RULES == max(RULE_SETS, key=int)
    assert new.config_hash() != published["config_hash"]
    newest = json.loads((ROOT / "docs" / "revisions" / "noise3-1339" / "manifest.json").read_text(encoding="utf-8"))
    assert (new.label, new.config_hash()) == (newest["label"], newest["config_hash"])


def test_an_unknown_rules_version_is_one_line(tmp_path, shared_data):
    from hteb_contract.errors import HtebError
    from hteb_generate.setup.config import build_config

    with pytest.raises(HtebError, match="unknown noise rules version '9'"):
        build_config(
            seed="1",
            profile="noise",
            overrides={
                "data_dir": str(shared_data),
                "noise_rules": "9",
                "store": str(tmp_path / "s"),
                "cache_dir": str(tmp_path),
            },
        )


def test_docs_noise_shows_the_table_of_the_rules_per_script():
    page = (ROOT / "docs" / "noise.md").read_text(encoding="utf-8")
    start, end = page.index(TABLE_START), page.index(TABLE_END) + len(TABLE_END)
    assert page[start:end] == markdown_table(), (
        "regenerate: python -c 'from hteb_contract.specs.noise_scripts import markdown_table; print(markdown_table())'"
    )


@pytest.mark.parametrize(("label", "quoting"), [("noise2-1339", 3), ("noise3-1339", 0)])
def test_every_rules_version_after_the_first_records_where_each_rule_applies(label, quoting):
    """Every version after 1 reads the script table, so its revisions record, per subset, the script and
    whether each rule applies (noise3-1339 was first sealed without: the table's versions were "2" alone).
    A rule declared not applicable changes no text in version 3; version 2 edited the words of other scripts
    that three such subsets quote (SemRel2024's Arabic and Hindi: `quoting` entries), which version 3 leaves."""
    from hteb_contract.revision.change_shares import TABLE_RULES

    assert TABLE_RULES == set(RULE_SETS) - {FIRST_RULES}
    manifest = json.loads((ROOT / "docs" / "revisions" / label / "manifest.json").read_text(encoding="utf-8"))
    shares = manifest["change_shares"]
    assert shares and all({"script", "applicable", "why_not"} <= entry.keys() for entry in shares)
    assert sum(entry["changed"] > 0 for entry in shares if not entry["applicable"]) == quoting
    assert any(not entry["applicable"] for entry in shares)
