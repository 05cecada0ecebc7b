#include "orchestrator/control/certs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace collide::orchestrator::control {
namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;
using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

Status openssl_error(std::string_view what) {
  const unsigned long code = ERR_get_error();
  char text[256] = "unknown error";
  if (code != 0) ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return internal_error(fmt::format("{}: {}", what, text));
}

Result<KeyPtr> new_p256_key() {
  KeyPtr key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  if (!key) return openssl_error("generating an EC P-256 key");
  return key;
}

Status add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return openssl_error(fmt::format("certificate extension '{}'", value));
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (ok != 1) return openssl_error("adding a certificate extension");
  return {};
}

enum class Role { kCa, kServer, kClient };

// A certificate for `key`, signed by the issuer (or by itself for the CA).
Result<CertPtr> make_certificate(Role role, const std::string& common_name, EVP_PKEY* key,
                                 X509* issuer, EVP_PKEY* issuer_key,
                                 const std::vector<std::string>& names, int valid_days) {
  CertPtr cert(X509_new(), &X509_free);
  if (!cert) return openssl_error("allocating a certificate");
  X509_set_version(cert.get(), 2);  // v3, which extensions need
  // A random 64-bit serial: two certificates of one CA must never share one.
  unsigned char serial_bytes[8];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return openssl_error("random serial");
  serial_bytes[0] &= 0x7f;  // positive
  BIGNUM* serial = BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr);
  BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert.get()));
  BN_free(serial);
  // A minute of slack for clocks that differ a little between the hosts.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(valid_days) * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("collide"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));

  if (role == Role::kCa) {
    COLLIDE_RETURN_IF_ERROR(add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE"));
    COLLIDE_RETURN_IF_ERROR(add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign"));
  } else {
    COLLIDE_RETURN_IF_ERROR(add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE"));
    COLLIDE_RETURN_IF_ERROR(add_extension(cert.get(), signer, NID_key_usage, "critical,digitalSignature"));
    COLLIDE_RETURN_IF_ERROR(add_extension(cert.get(), signer, NID_ext_key_usage,
                                          role == Role::kServer ? "serverAuth" : "clientAuth"));
    std::string san;
    for (const std::string& n : names) {
      in_addr v4{};
      in6_addr v6{};
      const bool is_ip = inet_pton(AF_INET, n.c_str(), &v4) == 1 || inet_pton(AF_INET6, n.c_str(), &v6) == 1;
      san += fmt::format("{}{}:{}", san.empty() ? "" : ",", is_ip ? "IP" : "DNS", n);
    }
    if (!san.empty()) COLLIDE_RETURN_IF_ERROR(add_extension(cert.get(), signer, NID_subject_alt_name, san));
  }
  COLLIDE_RETURN_IF_ERROR(add_extension(cert.get(), signer, NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) return openssl_error("signing a certificate");
  return cert;
}

// Writes what `write` puts into a memory BIO to `path`, created with mode 0600 from the start (a
// key must never be readable by others, not even for a moment).
template <typename Write>
Status write_private_file(const std::filesystem::path& path, Write write) {
  BioPtr bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (!bio || write(bio.get()) != 1) return openssl_error(fmt::format("encoding {}", path.string()));
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  // A file left by an earlier run goes first, so the new one is created 0600 (not opened with
  // the old mode); one that cannot go is an error naming it, never an exception.
  if (std::error_code ec; !std::filesystem::remove(path, ec) && ec) {
    return errno_status(ec.value(), fmt::format("replacing {}", path.string()));
  }
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno_status(errno, fmt::format("creating {}", path.string()));
  fchmod(fd, 0600);  // the umask cannot widen it, but an old file's mode could differ
  ssize_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, static_cast<size_t>(size - done));
    if (n < 0) {
      const int err = errno;
      close(fd);
      return errno_status(err, fmt::format("writing {}", path.string()));
    }
    done += n;
  }
  if (close(fd) != 0) return errno_status(errno, fmt::format("writing {}", path.string()));
  return {};
}

Status write_cert(const std::filesystem::path& path, X509* cert) {
  return write_private_file(path, [cert](BIO* b) { return PEM_write_bio_X509(b, cert); });
}

Status write_key(const std::filesystem::path& path, EVP_PKEY* key) {
  return write_private_file(path, [key](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
  });
}

}  // namespace

Status generate_certs(const std::filesystem::path& dir, const CertOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return errno_status(ec.value(), fmt::format("creating {}", dir.string()));
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);

  auto ca_key = new_p256_key();
  if (!ca_key.ok()) return ca_key.status();
  auto ca = make_certificate(Role::kCa, "collide CA", ca_key->get(), nullptr, ca_key->get(), {},
                             options.valid_days);
  if (!ca.ok()) return ca.status();

  std::vector<std::string> server_names = {"127.0.0.1", "::1", "localhost"};
  server_names.insert(server_names.end(), options.extra_server_names.begin(),
                      options.extra_server_names.end());
  auto server_key = new_p256_key();
  if (!server_key.ok()) return server_key.status();
  auto server = make_certificate(Role::kServer, "collide agent", server_key->get(), ca->get(),
                                 ca_key->get(), server_names, options.valid_days);
  if (!server.ok()) return server.status();

  auto client_key = new_p256_key();
  if (!client_key.ok()) return client_key.status();
  auto client = make_certificate(Role::kClient, "collide orchestrator", client_key->get(),
                                 ca->get(), ca_key->get(), {"localhost"}, options.valid_days);
  if (!client.ok()) return client.status();

  COLLIDE_RETURN_IF_ERROR(write_cert(dir / "ca.pem", ca->get()));
  COLLIDE_RETURN_IF_ERROR(write_key(dir / "ca.key", ca_key->get()));
  COLLIDE_RETURN_IF_ERROR(write_cert(dir / "agent.pem", server->get()));
  COLLIDE_RETURN_IF_ERROR(write_key(dir / "agent.key", server_key->get()));
  COLLIDE_RETURN_IF_ERROR(write_cert(dir / "orchestrator.pem", client->get()));
  COLLIDE_RETURN_IF_ERROR(write_key(dir / "orchestrator.key", client_key->get()));
  return {};
}

TlsFiles agent_files(const std::filesystem::path& dir) {
  return {dir / "ca.pem", dir / "agent.pem", dir / "agent.key"};
}

TlsFiles orchestrator_files(const std::filesystem::path& dir) {
  return {dir / "ca.pem", dir / "orchestrator.pem", dir / "orchestrator.key"};
}

}  // namespace collide::orchestrator::control
