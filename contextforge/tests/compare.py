"""The verdict of the gateway test (scripts/ci/contextforge.sh): what the
client got through the gateway without the plugin and with it, compared.

    compare.py WITHOUT WITH SUCCEEDING FAILING -- COMMAND [ARGS...]

WITHOUT and WITH are gateway_client.py's output, SUCCEEDING and FAILING JSON
lists of tool names. COMMAND is the mcp-tool-errors command with the options
the plugin was configured with. Every succeeding tool's result must be the
same both ways; every failing tool's result with the plugin must be its result
without, each text as the command writes it for that tool and that text (the
command run over failing_child.py, which fails with the gateway's text).
Prints each tool's texts both ways; exits 1 on a difference.
"""

import copy
import json
import os
import subprocess
import sys

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "failing_child.py")


def texts_of(outcome):
    return [item["text"] for item in outcome["result"]["content"] if item.get("type") == "text"]


def written_by_command(command, texts):
    """What `command` writes for each (tool, text) of `texts`, in order."""
    by_tool = {tool: text for tool, text in texts}
    requests = "".join(
        json.dumps({"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
        + "\n"
        for index, (tool, _) in enumerate(texts)
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
    return [answers[index] for index in range(len(texts))]


def main():
    separator = sys.argv.index("--")
    without_path, with_path, succeeding, failing = sys.argv[1:separator]
    command = sys.argv[separator + 1 :]
    with open(without_path) as file:
        without = json.load(file)
    with open(with_path) as file:
        plugged = json.load(file)
    succeeding, failing = json.loads(succeeding), json.loads(failing)
    problems = []

    for tool in succeeding:
        if without[tool] != plugged[tool] or without[tool]["result"].get("isError"):
            problems.append(f"{tool}: a success changed, or failed: {without[tool]} / {plugged[tool]}")

    pairs = []
    for tool in failing:
        if not without[tool].get("result", {}).get("isError"):
            problems.append(f"{tool}: expected an isError result without the plugin, got {without[tool]}")
            continue
        pairs.extend((tool, text) for text in texts_of(without[tool]))
    expected_texts = iter(written_by_command(command, pairs))

    for tool in failing:
        if not without[tool].get("result", {}).get("isError"):
            continue
        expected = copy.deepcopy(without[tool])
        for item in expected["result"]["content"]:
            if item.get("type") == "text":
                item["text"] = next(expected_texts)
        if plugged[tool] != expected:
            problems.append(f"{tool}: with the plugin {json.dumps(plugged[tool])}, the command writes {json.dumps(expected)}")

    for tool in succeeding + failing:
        print(f"{tool}")
        print(f"  without the plugin: {json.dumps(texts_of(without[tool]) if 'result' in without[tool] else without[tool])}")
        print(f"  with the plugin:    {json.dumps(texts_of(plugged[tool]) if 'result' in plugged[tool] else plugged[tool])}")
    for problem in problems:
        print(f"FAILED {problem}", file=sys.stderr)
    failed = {problem.split(":")[0] for problem in problems}
    print(f"{len(succeeding) + len(failing) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
