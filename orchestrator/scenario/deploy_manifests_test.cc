// The fleet launchers in configs/deploy start agents with options `collide agent` really has:
// a renamed or removed flag fails here, not on someone's cluster.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "common/process.h"

namespace collide {
namespace {

const std::filesystem::path kDeploy = std::filesystem::path(COLLIDE_CONFIGS_DIR) / "deploy";

// The long options `collide agent --help` lists.
std::set<std::string> agent_options() {
  auto help = process::run_command({COLLIDE_BIN, "agent", "--help"});
  EXPECT_TRUE(help.ok());
  std::set<std::string> out;
  if (!help.ok()) return out;
  static const std::regex option(R"((--[a-z][a-z0-9-]*))");
  for (std::sregex_iterator it(help->output.begin(), help->output.end(), option), end; it != end; ++it) {
    out.insert((*it)[1]);
  }
  return out;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The long options on a command line, in order.
std::vector<std::string> options_in(const std::string& command) {
  static const std::regex option(R"((--[a-z][a-z0-9-]*))");
  std::vector<std::string> out;
  for (std::sregex_iterator it(command.begin(), command.end(), option), end; it != end; ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

// The rest of the line that starts with `key` ("" when no line does).
std::string line_value(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key, 0) == 0) return line.substr(key.size());
  }
  return "";
}

TEST(DeployManifestsTest, DaemonSetRunsAPrivilegedAgentOnTheHostNetworkWithSecretCerts) {
  const YAML::Node doc = YAML::LoadFile((kDeploy / "collide-agent-daemonset.yaml").string());
  EXPECT_EQ(doc["kind"].as<std::string>(), "DaemonSet");
  EXPECT_EQ(doc["apiVersion"].as<std::string>(), "apps/v1");
  const YAML::Node pod = doc["spec"]["template"]["spec"];
  EXPECT_TRUE(pod["hostNetwork"].as<bool>());
  // The selector picks the pods the template makes.
  EXPECT_EQ(doc["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"].as<std::string>(),
            doc["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"].as<std::string>());
  ASSERT_EQ(pod["containers"].size(), 1u);
  const YAML::Node agent = pod["containers"][0];
  EXPECT_TRUE(agent["securityContext"]["privileged"].as<bool>());
  EXPECT_EQ(agent["command"][0].as<std::string>(), "collide");
  EXPECT_EQ(agent["command"][1].as<std::string>(), "agent");

  const std::set<std::string> known = agent_options();
  ASSERT_TRUE(known.count("--listen") && known.count("--certs")) << "collide agent --help changed";
  std::map<std::string, std::string> args;
  const YAML::Node list = agent["args"];
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string a = list[i].as<std::string>();
    if (a.rfind("--", 0) != 0) continue;
    EXPECT_TRUE(known.count(a)) << a << " is not an option of collide agent";
    args[a] = i + 1 < list.size() ? list[i + 1].as<std::string>() : "";
  }
  ASSERT_TRUE(args.count("--listen"));
  ASSERT_TRUE(args.count("--certs"));
  // The certificates directory is where the Secret is mounted.
  std::string certs_volume;
  for (const YAML::Node& m : agent["volumeMounts"]) {
    if (m["mountPath"].as<std::string>() == args["--certs"]) certs_volume = m["name"].as<std::string>();
  }
  ASSERT_FALSE(certs_volume.empty()) << "--certs " << args["--certs"] << " is not a mounted volume";
  bool secret = false;
  for (const YAML::Node& v : pod["volumes"]) {
    if (v["name"].as<std::string>() == certs_volume && v["secret"]) secret = true;
  }
  EXPECT_TRUE(secret) << "the certificates come from a Secret";
}

TEST(DeployManifestsTest, SlurmScriptStartsOneAgentPerNodeWithKnownOptions) {
  const std::string script = read_text(kDeploy / "collide-agents.sbatch");
  EXPECT_NE(script.find("#SBATCH --ntasks-per-node=1"), std::string::npos);
  EXPECT_NE(script.find("srun --ntasks-per-node=1"), std::string::npos);
  // Every option on the command that starts the agent (from " agent " to the end of the command).
  const auto at = script.find(" agent --listen");
  ASSERT_NE(at, std::string::npos);
  const std::string command = script.substr(at, script.find("\n'", at) - at);
  const std::set<std::string> known = agent_options();
  const std::vector<std::string> used = options_in(command);
  for (const std::string& o : used) EXPECT_TRUE(known.count(o)) << o << " is not an option of collide agent";
  EXPECT_GE(used.size(), 2u);
  EXPECT_EQ(process::run_command({"bash", "-n", (kDeploy / "collide-agents.sbatch").string()})->exit_code, 0);
}

// The Debian package's unit: the installed command, the certificates folder the package makes,
// and the options of its settings file, all ones `collide agent` has.
TEST(DeployManifestsTest, SystemdUnitRunsTheInstalledAgentWithKnownOptions) {
  const std::string unit = read_text(kDeploy / "collide-agent.service");
  const std::string exec = line_value(unit, "ExecStart=");
  ASSERT_EQ(exec.rfind("/usr/bin/collide agent ", 0), 0u) << exec;
  EXPECT_NE(exec.find("--certs /etc/collide/certs "), std::string::npos) << exec;
  EXPECT_NE(exec.find("$COLLIDE_AGENT_ARGS"), std::string::npos) << exec;
  EXPECT_EQ(line_value(unit, "EnvironmentFile="), "/etc/collide/agent.env");
  EXPECT_EQ(line_value(unit, "Restart="), "on-failure");
  EXPECT_EQ(line_value(unit, "WantedBy="), "multi-user.target");

  const std::string settings = read_text(kDeploy / "collide-agent.env");
  const std::string args = line_value(settings, "COLLIDE_AGENT_ARGS=");
  ASSERT_GE(args.size(), 2u);
  ASSERT_EQ(args.front(), '"');
  ASSERT_EQ(args.back(), '"');
  const std::set<std::string> known = agent_options();
  std::set<std::string> given;
  for (const std::string& o : options_in(exec + " " + args)) {
    EXPECT_TRUE(known.count(o)) << o << " is not an option of collide agent";
    given.insert(o);
  }
  for (const char* o : {"--certs", "--work-dir", "--listen", "--interfaces", "--port-spec"}) {
    EXPECT_TRUE(given.count(o)) << "the unit does not pass " << o;
  }
}

}  // namespace
}  // namespace collide
