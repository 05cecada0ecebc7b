// The fleet launchers in configs/deploy start agents with options `collide agent` really has:
// a renamed or removed flag fails here, not on someone's cluster.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

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
  std::ifstream in(kDeploy / "collide-agents.sbatch");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string script = text.str();
  EXPECT_NE(script.find("#SBATCH --ntasks-per-node=1"), std::string::npos);
  EXPECT_NE(script.find("srun --ntasks-per-node=1"), std::string::npos);
  // Every option on the command that starts the agent (from " agent " to the end of the command).
  const auto at = script.find(" agent --listen");
  ASSERT_NE(at, std::string::npos);
  const std::string command = script.substr(at, script.find("\n'", at) - at);
  const std::set<std::string> known = agent_options();
  static const std::regex option(R"((--[a-z][a-z0-9-]*))");
  int seen = 0;
  for (std::sregex_iterator it(command.begin(), command.end(), option), end; it != end; ++it, ++seen) {
    EXPECT_TRUE(known.count((*it)[1])) << (*it)[1] << " is not an option of collide agent";
  }
  EXPECT_GE(seen, 2);
  EXPECT_EQ(process::run_command({"bash", "-n", (kDeploy / "collide-agents.sbatch").string()})->exit_code, 0);
}

}  // namespace
}  // namespace collide
