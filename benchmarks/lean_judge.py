"""The lean reference for end-to-end speed (issue 47): an OpenAI client and asyncio, nothing else.

``python benchmarks/lean_judge.py ITEMS.jsonl OUT.jsonl --api-base URL [--concurrency 32]``
asks one judge request per JudgeItem line (system prompt, the candidate, JSON answer), parses
the JSON and appends one line per item to OUT. No retries, no cache, no summary, no report.
"""

import argparse
import asyncio
import json

from openai import AsyncOpenAI

SYSTEM = (
    "Score the reply from 1 to 5 on overall_score, emotional_appropriateness, helpfulness and "
    "tone_match. Answer with one JSON object with those keys and a rationale."
)


async def judge(client: AsyncOpenAI, gate: asyncio.Semaphore, item: dict) -> dict:
    context = "\n".join(f"{m['role']}: {m['content']}" for m in item["context"])
    user = f"{context}\n\nReply: {item['candidate']}\nReference: {item.get('reference')}"
    async with gate:
        try:
            answer = await client.chat.completions.create(
                model="fake",
                messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                response_format={"type": "json_object"},
            )
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
    args = parser.parse_args()
    with open(args.items, encoding="utf-8") as f:
        items = [json.loads(line) for line in f if line.strip()]
    client = AsyncOpenAI(base_url=args.api_base, api_key="none", max_retries=0)
    gate = asyncio.Semaphore(args.concurrency)
    results = await asyncio.gather(*(judge(client, gate, it) for it in items))
    with open(args.out, "a", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    await client.close()


if __name__ == "__main__":
    asyncio.run(main())
