// The options of eval, tasks, serve and evald, and those most commands share.
#include "agent/cli/option_rows.hpp"

namespace ptxbench::cli {

std::vector<option> tool_option_rows() {
  return {
      make_option("tasks-dir", "DIR",
                  "folder of task files (export and report: each task's level and variant, read when present)")
          .by_default("tasks"),
      make_option("eval.task", "ID|FILE", "the task: an id in --tasks-dir or a task JSON file"),
      make_option("ptx", "FILE", "the PTX module"),
      make_option("manifest", "FILE", "the launch manifest (JSON)"),
      make_option("reply", "FILE",
                  "a whole model reply (markdown with ```ptx and ```json blocks) instead of --ptx and --manifest"),
      make_option("no-timing", "", "skip the performance stage").boolean(),
      make_option("profile", "", "eval: profile a candidate that reached the performance stage (kernel figures "
                                 "beside the library's, stall reasons on its own PTX lines; needs a GPU)").boolean(),
      make_option("json", "", "print JSON only (eval: the result; tasks show: the task, hidden sizes included; tasks list: one array)").boolean(),
      make_option("table", "", "print the table only").boolean(),
      make_option("action", "ACTION", "what to do with the tasks").one_of({"list", "show", "check"})
          .by_default("list")
          .as_positional(),
      make_option("id", "ID", "tasks show: the task id").as_positional(),
      make_option("prompt", "", "tasks show: print the system and task prompts a model receives").boolean(),
      make_option("host", "ADDRESS",
                  "address to bind (serve: any other than loopback exposes model output to the network; evald: any "
                  "other than loopback needs --token-env)")
          .by_default("127.0.0.1"),
      make_option("port", "PORT", "port to listen on (serve: default 8080, evald: default 8477; 0 picks a free one)")
          .integer(0, 65535),
      make_option("token-env", "VAR", "environment variable holding the bearer token clients must send"),
      make_option("evald.db", "FILE", "request log database ('none' logs nothing)").by_default("runs/evald.db"),
      make_option("width", "N", "evaluations at once (0: the hardware threads, at least 2)")
          .integer(0, 1024)
          .by_default("0"),
      make_option("queue", "N", "evaluations admitted at once, running and waiting; beyond: 429")
          .integer(1, 1024)
          .by_default("64"),
      make_option("max-batch", "N", "requests in one batch (default and most: --queue, as a batch is admitted whole)")
          .integer(1, 1024),
      make_option("max-body-mb", "N", "largest request body in MiB").integer(1, 4096).by_default("64"),
      make_option("port-file", "FILE", "write the bound port to FILE once listening (for scripts using --port 0)"),
  };
}

}  // namespace ptxbench::cli
