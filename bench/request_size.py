"""What an oversized Ask request costs the server (issue 39, item 4: a 20 MB chat turn cost 41 s and was
echoed back in full). Launches app.py on 127.0.0.1 (offline, a temporary MADQA_HOME), sends each request
through ``/gradio_api/queue/join`` and prints, as JSON, how long the refusal took and what it said.

    PYTHONPATH=$PWD python -m bench.request_size
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent


def turn(text: str, role: str = "assistant") -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ask_client(url: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    """One ask with ``history`` through gradio_client (every other field its default, the offline backend)."""
    from gradio_client import Client

    client = Client(url, verbose=False, download_files=False, analytics_enabled=False)
    start = time.monotonic()
    try:
        result = client.predict(question="How many capybaras?", history=history, backend="offline", api_name="/ask")
    except Exception as exc:  # noqa: BLE001 - a benchmark reports whatever the client raised
        return {"seconds": round(time.monotonic() - start, 2), "refused": True, "said": str(exc)[:200]}
    return {"seconds": round(time.monotonic() - start, 2), "refused": False,
            "answer_bytes": len(json.dumps(result, default=str))}


def ask(url: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    """One raw join with ``history`` (as a hostile client sends it): seconds until the refusal, and what it said."""
    config = httpx.get(url + "config", timeout=10).json()
    index, dep = next((i, d) for i, d in enumerate(config["dependencies"]) if d.get("api_name") == "ask")
    session = os.urandom(6).hex()
    body = json.dumps({"data": ["How many capybaras?", history], "fn_index": index,
                       "trigger_id": dep["targets"][0][0], "session_hash": session})
    start = time.monotonic()
    joined = httpx.post(url + "gradio_api/queue/join", content=body, timeout=120,
                        headers={"content-type": "application/json"})
    if joined.status_code != 200:
        return {"status": joined.status_code, "seconds": round(time.monotonic() - start, 2),
                "said": joined.json().get("detail")}
    with httpx.stream("GET", url + f"gradio_api/queue/data?session_hash={session}", timeout=120) as stream:
        for line in stream.iter_lines():
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if message.get("msg") == "process_completed":
                output = message.get("output") or {}
                return {"status": 200, "seconds": round(time.monotonic() - start, 2),
                        "success": message.get("success"), "said": str(output.get("error"))[:200],
                        "answer_bytes": len(json.dumps(output))}
    return {"status": 200, "seconds": round(time.monotonic() - start, 2), "said": "no completion"}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        port, base = free_port(), Path(tmp)
        env = {**os.environ, "MADQA_HOME": str(base / "home"), "GRADIO_TEMP_DIR": str(base / "gradio"),
               "MADQA_HOST": "127.0.0.1", "MADQA_PORT": str(port), "MADQA_OCR": "never",
               "GRADIO_ANALYTICS_ENABLED": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        url = f"http://127.0.0.1:{port}/"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(url + "config", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("the app did not start")
                time.sleep(0.3)
            print(json.dumps({"request": "a 20 MB turn, raw", **ask(url, [turn("w" * 20 * 2**20)])}), flush=True)
            for name, history in (("a 3.5 MB turn (under the body cap)", [turn("w" * 3_500_000)]),
                                  ("1,001 short messages", [turn(f"m{i}") for i in range(1_001)]),
                                  ("a real two-turn chat", [turn("How many okapis?", "user"), turn("412")])):
                print(json.dumps({"request": name, **ask_client(url, history)}), flush=True)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


if __name__ == "__main__":
    main()
