#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

// Certificates for the control channel's mutual TLS: a private CA, a certificate for agents (the
// TLS servers) and one for the orchestrator (the client), EC P-256 keys, names 127.0.0.1 and
// localhost. Whoever holds the CA key can admit new parties, so every file is readable by its
// owner only.
namespace collide::orchestrator::control {

// The three files one side of a connection presents and checks against.
struct TlsFiles {
  std::filesystem::path ca;           // the CA certificate the peer must chain to
  std::filesystem::path certificate;  // our certificate
  std::filesystem::path key;          // our private key
};

struct CertOptions {
  int valid_days = 30;
  // Extra names (IP addresses or DNS names) for the agent certificate, e.g. a remote host's.
  std::vector<std::string> extra_server_names;
};

// Writes ca.pem, ca.key, agent.pem, agent.key, orchestrator.pem, orchestrator.key into `dir`
// (created if missing), each with mode 0600. Existing files are replaced.
Status generate_certs(const std::filesystem::path& dir, const CertOptions& options = {});

// The files an agent (server) and the orchestrator (client) use, from a directory as above.
TlsFiles agent_files(const std::filesystem::path& dir);
TlsFiles orchestrator_files(const std::filesystem::path& dir);

}  // namespace collide::orchestrator::control
