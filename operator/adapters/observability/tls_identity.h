#ifndef BSW_ADAPTERS_OBSERVABILITY_TLS_IDENTITY_H_
#define BSW_ADAPTERS_OBSERVABILITY_TLS_IDENTITY_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "operator/ports/clock.h"

struct ssl_ctx_st;
struct ssl_st;

namespace bsw::observability {

// A serving certificate (PEM: the leaf first, then any intermediates) and its private key (PEM).
struct TlsIdentity {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed certificate made now, valid from an hour ago for a year: EC P-256, CN
// budgetsweep-operator, the given DNS names and IP addresses as subjectAltNames. Nobody can
// verify it against a CA: it encrypts, and callers that scrape it skip verification (or pin it).
[[nodiscard]] StatusOr<TlsIdentity> SelfSignedIdentity(const std::vector<std::string>& dns_names,
                                                       const std::vector<std::string>& ips);

// Reads a certificate and key from PEM files. InvalidArgument, naming the file, for an
// unreadable file, no certificate, no key, or a key that does not match the certificate.
[[nodiscard]] StatusOr<TlsIdentity> ReadTlsIdentity(const std::string& cert_file,
                                                    const std::string& key_file);

// The certificate a TLS server presents, picked per handshake, so that a renewed certificate
// (cert-manager, a Secret update that the kubelet syncs into the pod) is served without a restart:
// with files, they are checked for changes at most every `reload_seconds` and re-read when they
// changed; a pair that does not load keeps the last good one. Thread-safe.
class ServingCertificate {
 public:
  // A fixed identity (the self-signed one). InvalidArgument when it does not parse.
  [[nodiscard]] static StatusOr<std::unique_ptr<ServingCertificate>> Fixed(
      const TlsIdentity& identity);
  // From files, re-read when they change. InvalidArgument when they do not load now.
  [[nodiscard]] static StatusOr<std::unique_ptr<ServingCertificate>> FromFiles(
      const std::string& cert_file, const std::string& key_file, const Clock& clock,
      double reload_seconds = 10);
  ~ServingCertificate();
  ServingCertificate(const ServingCertificate&) = delete;
  ServingCertificate& operator=(const ServingCertificate&) = delete;

  // Sets up `ctx` to present this certificate (TLS 1.2 and later). Must outlive the context.
  bool Install(ssl_ctx_st* ctx);

  // The certificate served now (PEM, leaf first), for logs and tests.
  std::string CertificatePem();

  struct Loaded;  // the parsed certificate, chain and key (tls_identity.cc)

 private:
  ServingCertificate(std::shared_ptr<const Loaded> loaded, std::string cert_file,
                     std::string key_file, const Clock* clock, double reload_seconds);
  std::shared_ptr<const Loaded> Current();
  static int OnCertificate(ssl_st* ssl, void* self);

  std::mutex mu_;
  std::shared_ptr<const Loaded> loaded_;
  const std::string cert_file_;
  const std::string key_file_;
  const Clock* clock_;
  const double reload_seconds_;
  double checked_at_ = 0;
  std::string stamp_;  // the files' sizes and modification times when last read
};

}  // namespace bsw::observability

#endif  // BSW_ADAPTERS_OBSERVABILITY_TLS_IDENTITY_H_
