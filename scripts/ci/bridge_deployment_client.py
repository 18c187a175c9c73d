"""The client of the bridge's deployment test (scripts/ci/bridge_deployment.sh),
in the standard library alone: WORKERS threads, each on a kept-alive
connection to the balancer, open SESSIONS sessions in all and make CALLS calls
in each (every fifth a slow one), as the Streamable HTTP transport asks: an
`initialize`, `notifications/initialized`, the calls, a `DELETE`. A session
answered `404` (its replica is gone) is opened again, as the transport says,
and the call made again in the new one. Once a third of the calls are
answered, the replica STOPPED_PID gets SIGTERM.

Usage: bridge_deployment_client.py URL STOPPED_PID SESSIONS CALLS WORKERS

Prints the figures as one JSON object; exits 1 when a call was lost (any
answer but its own result or a 404 that opened a new session), a result was
not the call's own, or a live session was not found: a 404 before the stop,
or more after it than sessions could have been on the stopped replica (each
worker holds one session at a time: WORKERS when it stopped, as many again
opened there before the balancer saw it drain)."""

import http.client
import json
import os
import signal
import sys
import threading
import time
import urllib.parse

url = urllib.parse.urlsplit(sys.argv[1])
stopped_pid, sessions, calls, workers = (int(argument) for argument in sys.argv[2:6])
PROTOCOL = "2025-11-25"

counted = threading.Lock()
figures = {"sessions": 0, "calls": calls * sessions, "answered": 0, "lost": 0,
           "not_found": 0, "not_found_before_the_stop": 0, "wrong": 0,
           "deleted": 0, "deleted_gone": 0}
losses = []
stop_at = figures["calls"] // 3
stopped = threading.Event()
next_session = iter(range(sessions))


def count(name, detail=None):
    with counted:
        figures[name] += 1
        if detail is not None:
            losses.append(detail)
        if name == "answered" and figures["answered"] >= stop_at and not stopped.is_set():
            stopped.set()
            os.kill(stopped_pid, signal.SIGTERM)
            figures["stopped_after_seconds"] = round(time.monotonic() - started, 2)


class Client:
    """One worker's connection to the balancer."""

    def __init__(self):
        self.connection = None

    def request(self, method, body=None, session=None):
        """The status, the headers and the JSON-RPC messages of the answer."""
        headers = {"Accept": "application/json, text/event-stream",
                   "Content-Type": "application/json",
                   "MCP-Protocol-Version": PROTOCOL}
        if session:
            headers["Mcp-Session-Id"] = session
        if self.connection is None:
            self.connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        try:
            self.connection.request(method, url.path, body=body and json.dumps(body), headers=headers)
            response = self.connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = None
            raise
        if response.getheader("connection", "").lower() == "close":
            self.connection.close()
            self.connection = None
        return response.status, response, messages(response, data)

    def open(self):
        """A new session: its id."""
        status, response, answers = self.request("POST", {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                       "clientInfo": {"name": "deployment", "version": "1"}}})
        if status != 200 or not answers or "result" not in answers[0]:
            raise RuntimeError(f"initialize: {status} {answers}")
        session = response.getheader("mcp-session-id")
        status, _, _ = self.request("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        if status != 202:
            raise RuntimeError(f"notifications/initialized: {status}")
        count("sessions")
        return session


def messages(response, data):
    if response.getheader("content-type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in data.decode().splitlines() if line.startswith("data:")]
    return [json.loads(data)] if data else []


def call(client, session, number, tool, text):
    """Makes the call, in a new session when its own is gone: the session."""
    while True:
        try:
            status, _, answers = client.request("POST", {
                "jsonrpc": "2.0", "id": number, "method": "tools/call",
                "params": {"name": tool, "arguments": {"text": text}}}, session)
        except (OSError, http.client.HTTPException) as error:
            count("lost", f"{text}: {error!r}")
            return session
        if status == 404:
            count("not_found" if stopped.is_set() else "not_found_before_the_stop")
            try:
                session = client.open()
            except (OSError, http.client.HTTPException, RuntimeError) as error:
                count("lost", f"{text}: a new session: {error!r}")
                return None
            continue
        if status != 200 or not answers:
            count("lost", f"{text}: {status} {answers}")
            return session
        answer = answers[-1]
        if answer.get("id") != number or answer.get("result", {}).get("content") != [{"type": "text", "text": text}]:
            count("wrong", f"{text}: {answer}")
        count("answered")
        return session


def work():
    client = Client()
    for index in next_session_indexes():
        try:
            session = client.open()
        except (OSError, http.client.HTTPException, RuntimeError) as error:
            count("lost", f"session {index}: {error!r}")
            continue
        for number in range(1, calls + 1):
            tool = "slow" if number % 5 == 0 else "echo"
            session = call(client, session, number, tool, f"{index}-{number}")
            if session is None:
                break
        if session is not None:
            try:
                status, _, _ = client.request("DELETE", session=session)
                count("deleted" if status == 200 else "deleted_gone")
            except (OSError, http.client.HTTPException):
                count("deleted_gone")


def next_session_indexes():
    while True:
        with counted:
            index = next(next_session, None)
        if index is None:
            return
        yield index


started = time.monotonic()
threads = [threading.Thread(target=work) for _ in range(workers)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
figures["seconds"] = round(time.monotonic() - started, 2)
print(json.dumps(figures))
for loss in losses[:20]:
    print(loss, file=sys.stderr)
failed = (figures["lost"] or figures["wrong"] or figures["answered"] != figures["calls"]
          or figures["not_found_before_the_stop"] or figures["not_found"] > 2 * workers)
sys.exit(1 if failed else 0)
