"""The agent loop's parts beside its face (``madqa.agent.Agent``): what a question's run holds, the pure
policies that decide each turn, and what is read from a model's reply.

A turn is: ask the backend (``Agent._ask``, with server-limit recovery) → read the reply (tool calls
written as text, a cut-off, the answer object, a refusal: ``madqa.loop.replies``) → let a person change
the calls (``madqa.loop.steering``) → act (repair, answer, idle reply or tools: ``Agent._act``) → record.
Every decision about where the run stands — a budget spent, the answer forced, a repair turn granted,
prose replies counted — is a pure function of ``Progress`` in ``madqa.loop.policies``, tested alone.
Nothing here imports the agent; ``madqa.agent`` imports these.
"""
