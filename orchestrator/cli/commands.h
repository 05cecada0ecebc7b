#pragma once

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

// Each area of collide adds one subcommand to the `collide` command. An add_* function declares the
// subcommand's options on `app` and sets its callback; the callback reports failure by throwing
// CLI::RuntimeError(exit_code) after printing a message that names what was wrong.
namespace collide::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitUsage = 2;    // bad arguments or bad input files
inline constexpr int kExitFailed = 1;   // the work itself failed

// Prints "collide <command>: <message>" on stderr and ends the subcommand with `code`.
[[noreturn]] inline void fail(const std::string& command, int code, const std::string& message) {
  std::cerr << "collide " << command << ": " << message << "\n";
  throw CLI::RuntimeError(code);
}

void add_plan_command(CLI::App& app);
void add_testbed_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_inject_command(CLI::App& app);
void add_agent_command(CLI::App& app);
void add_certs_command(CLI::App& app);
void add_compare_command(CLI::App& app);

}  // namespace collide::cli
