"""Lean reference for end-to-end speed (issue 47): one client and asyncio, nothing else.

``lean_judge.py ITEMS.jsonl OUT.jsonl --api-base URL [--concurrency 32] [--client litellm]``:
a judge request per JudgeItem line, JSON parsed, a line per item appended to OUT; no retries,
cache, summary or report. The OpenAI SDK (default) or LiteLLM (issue 47's measured peer)."""

import argparse
import asyncio
import functools
import json
from pathlib import Path

SYSTEM = (
    "Score the reply from 1 to 5 on overall_score, emotional_appropriateness, helpfulness and "
    "tone_match. Answer with one JSON object with those keys and a rationale."
)


async def judge(ask, gate: asyncio.Semaphore, item: dict) -> dict:
    context = "\n".join(f"{m['role']}: {m['content']}" for m in item["context"])
    user = f"{context}\n\nReply: {item['candidate']}\nReference: {item.get('reference')}"
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    async with gate:
        try:
            answer = await ask(messages=messages, response_format={"type": "json_object"})
            scores = json.loads(answer.choices[0].message.content or "")
            return {"item_id": item["item_id"], "status": "ok", "scores": scores}
        except Exception as exc:  # a failure is a record, never a score
            return {"item_id": item["item_id"], "status": "error", "error": repr(exc)[:200]}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items")
    parser.add_argument("out")
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--client", choices=("openai", "litellm"), default="openai")
    args = parser.parse_args()
    items = [json.loads(s) for s in Path(args.items).read_text("utf-8").splitlines() if s.strip()]
    if args.client == "litellm":
        from litellm import acompletion

        where = {"model": "openai/fake", "api_base": args.api_base, "num_retries": 0}
        ask = functools.partial(acompletion, **where, api_key="none")
    else:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=args.api_base, api_key="none", max_retries=0)
        ask = functools.partial(client.chat.completions.create, model="fake")
    gate = asyncio.Semaphore(args.concurrency)
    results = await asyncio.gather(*(judge(ask, gate, it) for it in items))
    with open(args.out, "a", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
