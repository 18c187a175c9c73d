"""The verdict of the gateway test (scripts/ci/contextforge.sh): what the
client got through the gateway without the plugin and with it, compared.

    compare.py WITHOUT WITH SUCCEEDING FAILING -- COMMAND [ARGS...]

WITHOUT and WITH are gateway_client.py's output, SUCCEEDING and FAILING JSON
lists of tool names. COMMAND is the mcp-tool-errors command with the options
the plugin was configured with. Every succeeding tool's result must be the
same both ways; every failing tool's result with the plugin must be its result
without, each text as the command writes it for that tool and that text
(bindings/python/tests/verdict.py).
Prints each tool's texts both ways; exits 1 on a difference.
"""

import copy
import json
import os
import sys

# The oracle is the binding's hosts test's: the plugin is the binding's
# adapter in the gateway.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python", "tests"))
from verdict import conclude, written_by_command  # noqa: E402


def texts_of(outcome):
    return [item["text"] for item in outcome["result"]["content"] if item.get("type") == "text"]


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
    conclude(problems, succeeding + failing)


if __name__ == "__main__":
    main()
