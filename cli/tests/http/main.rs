//! The `mcp-tool-errors` command in HTTP mode (`--upstream URL --listen ADDR`),
//! the real binary between a plain HTTP client and a scripted upstream, all on
//! 127.0.0.1 with ephemeral ports: what passes through (`forwarding`), what is
//! rewritten (`rewriting`), and the answers when the upstream gives none
//! (`failures`), event streams as the grammar writes them (`event_grammar`),
//! answers a server compressed (`compressed`), JSON of any depth (`depth`), answers on resumed and GET streams (`resumed`), the bounds on what it waits for and reads (`bounds`), the command line (`options`) and `--invalid-params-as-tool-errors`
//! (`invalid_params`), task ids that any replica reads
//! (`replicas`), SIGTERM's drain (`drain`) and a second signal that ends it
//! (`stop_twice`), calls the client cancelled (`cancelled`), the limits on clients and the connection cap
//! (`client_limits`, and the attacks they stop: `attack`), memory given back
//! after a burst (`memory`), `--forwarded`, the
//! listen queue and `CONNECT` (`edge`), the bridge in front of a stdio
//! server (`bridge`), what it reads of a message (`bridge_messages`), who may
//! use it (`bridge_access`), what an operator
//! probes of it (`bridge_operations`) and its children's environment
//! (`bridge_environment`), the same random traffic through the three modes
//! against the library over JSON (`same_traffic`), a worker per CPU
//! (`workers`), and servers no one here wrote: one on
//! the official Python SDK (`python`) and the TypeScript reference server
//! (`everything`), and the bridge in front of three stdio servers through the
//! official clients (`bridge_servers`) and what those clients do when their
//! session is gone (`session_gone`), all ignored unless
//! scripts/install-test-servers.sh has run.
//! Every wait is bounded.

#[allow(dead_code, unreachable_pub)]
#[path = "../../../tests/support/example.rs"]
mod example;
#[allow(dead_code)]
#[path = "../support.rs"]
mod process_support;

mod attack;
mod bounds;
mod bridge;
mod bridge_access;
mod bridge_environment;
mod bridge_messages;
mod bridge_operations;
mod bridge_servers;
mod bridge_stuck;
mod cancelled;
mod client_limits;
mod compressed;
mod depth;
mod drain;
mod edge;
mod event_grammar;
mod everything;
mod failures;
mod forwarding;
mod invalid_params;
mod memory;
mod options;
mod otlp;
mod python;
mod replicas;
mod resumed;
mod rewriting;
mod same_traffic;
mod session_gone;
mod spellings;
mod stop_twice;
mod support;
mod typescript_tasks;
mod whole_request;
mod workers;
