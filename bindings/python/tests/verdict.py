"""What the verdicts of the hosts test (compare.py here) and of the gateway
test (contextforge/tests/compare.py) share: their oracle, what the
mcp-tool-errors command writes for a tool that failed with a given text (the
command over contextforge/tests/failing_child.py, a stdio server whose every
tool fails with the text it is given); and how a verdict ends.
"""

import json
import os
import subprocess
import sys

CHILD = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "contextforge", "tests", "failing_child.py"
)


def written_by_command(command, pairs):
    """What `command` (the command and its options) writes for each
    (tool, text) of `pairs`, in order."""
    if not pairs:
        return []
    by_tool = dict(pairs)
    requests = "".join(
        json.dumps({"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
        + "\n"
        for index, (tool, _) in enumerate(pairs)
    )
    run = subprocess.run(
        [*command, "--", sys.executable, CHILD, json.dumps(by_tool)],
        input=requests,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answers = {}
    for line in run.stdout.splitlines():
        answer = json.loads(line)
        answers[answer["id"]] = answer["result"]["content"][0]["text"]
    return [answers[index] for index in range(len(pairs))]


def conclude(problems, cases, label=""):
    """Prints `problems` (each `CASE: what differs`) to stderr and how many of
    `cases` passed, each line after `label`; exits 1 when there is a problem."""
    for problem in problems:
        print(f"FAILED {label}{problem}", file=sys.stderr)
    failed = {problem.split(":")[0] for problem in problems}
    print(f"{label}{len(cases) - len(failed & set(cases))} passed, {len(failed)} failed")
    sys.exit(1 if problems else 0)
