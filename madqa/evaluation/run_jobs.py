"""A batch run's questions answered on cluster workers (``madqa run ... --cluster URL``).

Each job is one question; a worker keeps one agent per (corpus generation, config, thread), so the
corpus, the index and the backend are opened once per worker, not per question. Rows come back to
the driver, which alone appends them to the prediction file (``runner.run_batch``). A job lost with
its worker is answered again elsewhere; the driver receives its row once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from madqa.agent import Agent
from madqa.corpus import Corpus
from madqa.evaluation.answering import answer_question
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import PipelineConfig, Settings

_LOCK = threading.Lock()
_AGENTS: dict[str, Any] = {}
MAX_AGENTS = 8


def _agent(root: str, state_dir: str, generation: str, config: PipelineConfig, settings: Settings,
           backend_options: dict[str, Any]) -> Agent:
    key = json.dumps([root, state_dir, generation, repr(config), repr(settings),
                      sorted(backend_options.items()), threading.get_ident()], default=str)
    with _LOCK:
        agent = _AGENTS.get(key)
    if agent is None:
        corpus = Corpus(Path(root), Path(state_dir), generation)
        agent = Agent(corpus, config, collect(get_plugin_manager(settings.plugins_dir), settings), settings, backend_options)
        with _LOCK:
            while len(_AGENTS) >= MAX_AGENTS:
                _AGENTS.pop(next(iter(_AGENTS)))
            _AGENTS[key] = agent
    return agent


def answer_job(job: tuple[str, str, str, PipelineConfig, Settings, dict[str, Any], Any]) -> dict[str, Any]:
    """One question's prediction row, on a worker (an error row on failure, like a local run)."""
    root, state_dir, generation, config, settings, backend_options, question = job
    return answer_question(question, config,
                           lambda: _agent(root, state_dir, generation, config, settings, backend_options))


def run_on_cluster(executor: Any, todo: Sequence[Any], corpus: Any, config: PipelineConfig, settings: Settings,
                   backend_options: dict[str, Any] | None) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(question, row) for every question of ``todo``, as the workers finish them, each once."""
    options = dict(backend_options or {})
    jobs = [(str(corpus.root), str(corpus.state_dir), corpus.generation, config, settings, options, q) for q in todo]
    for index, row in executor.map(answer_job, jobs):
        yield todo[index], row
