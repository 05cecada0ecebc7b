// `collide certs generate --dir D`: certificates for the control channel's mutual TLS.
#include <iostream>
#include <memory>

#include "orchestrator/cli/commands.h"
#include "orchestrator/control/certs.h"

namespace collide::cli {
namespace {

struct CertsOptions {
  std::string dir;
  int days = 30;
  std::vector<std::string> names;
};

}  // namespace

void add_certs_command(CLI::App& app) {
  auto opt = std::make_shared<CertsOptions>();
  CLI::App* certs = app.add_subcommand("certs", "Certificates for agents and the orchestrator");
  certs->require_subcommand(1);
  CLI::App* gen = certs->add_subcommand(
      "generate", "A CA, an agent and an orchestrator certificate (EC P-256, files 0600)");
  gen->add_option("--dir", opt->dir, "where the files go")->required();
  gen->add_option("--days", opt->days, "validity")->capture_default_str();
  gen->add_option("--name,--san", opt->names,
                  "another address or DNS name of the agents (besides 127.0.0.1, localhost)");
  gen->callback([opt] {
    orchestrator::control::CertOptions o;
    o.valid_days = opt->days;
    o.extra_server_names = opt->names;
    if (Status s = orchestrator::control::generate_certs(opt->dir, o); !s.ok()) {
      fail("certs", kExitFailed, s.message());
    }
    std::cout << "wrote ca.pem ca.key agent.pem agent.key orchestrator.pem orchestrator.key to "
              << opt->dir << "\n";
  });
}

}  // namespace collide::cli
