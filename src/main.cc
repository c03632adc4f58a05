// sparkops entry point: argv -> Run(args, env, out, err). Nothing else lives here.
#include <iostream>
#include <string>
#include <vector>

#include "cli/dispatch.h"

extern char** environ;

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  sparkops::Env env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  std::ios::sync_with_stdio(false);
  int rc = sparkops::Run(args, env, std::cout, std::cerr);
  std::cout.flush();
  return rc;
}
