#include "operator/adapters/observability/tls_identity.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <utility>

#include "base/read_file.h"

namespace bsw::observability {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct KeyCtxFree {
  void operator()(EVP_PKEY_CTX* ctx) const { EVP_PKEY_CTX_free(ctx); }
};
struct ChainFree {
  void operator()(STACK_OF(X509) * chain) const { sk_X509_pop_free(chain, X509_free); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;
using ChainPtr = std::unique_ptr<STACK_OF(X509), ChainFree>;

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string ToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(length));
}

std::string ToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(length));
}

// "inode size mtime" of each file (stat follows the symlinks a Secret volume swaps).
std::string Stamp(const std::string& cert_file, const std::string& key_file) {
  std::string stamp;
  for (const std::string* path : {&cert_file, &key_file}) {
    struct stat info {};
    if (stat(path->c_str(), &info) != 0) return "missing";
    stamp += std::to_string(info.st_ino) + " " + std::to_string(info.st_size) + " " +
             std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec) + ";";
  }
  return stamp;
}

}  // namespace

StatusOr<TlsIdentity> SelfSignedIdentity(const std::vector<std::string>& dns_names,
                                         const std::vector<std::string>& ips) {
  std::unique_ptr<EVP_PKEY_CTX, KeyCtxFree> key_ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nullptr));
  EVP_PKEY* raw_key = nullptr;
  if (!key_ctx || EVP_PKEY_keygen_init(key_ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_ec_paramgen_curve_nid(key_ctx.get(), NID_X9_62_prime256v1) <= 0 ||
      EVP_PKEY_keygen(key_ctx.get(), &raw_key) <= 0) {
    return InternalError("cannot generate an EC P-256 key for the self-signed certificate");
  }
  KeyPtr key(raw_key);
  X509Ptr cert(X509_new());
  if (!cert) return InternalError("cannot allocate a certificate");
  X509_set_version(cert.get(), 2);  // v3
  unsigned char serial_bytes[16];
  RAND_bytes(serial_bytes, sizeof serial_bytes);
  serial_bytes[0] &= 0x7F;  // positive
  BIGNUM* serial = BN_bin2bn(serial_bytes, sizeof serial_bytes, nullptr);
  BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert.get()));
  BN_free(serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("budgetsweep-operator"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  std::string alt_names;
  for (const std::string& dns : dns_names)
    alt_names += (alt_names.empty() ? "" : ",") + ("DNS:" + dns);
  for (const std::string& ip : ips) alt_names += (alt_names.empty() ? "" : ",") + ("IP:" + ip);
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, cert.get(), cert.get(), nullptr, nullptr, 0);
  std::vector<std::pair<int, std::string>> extensions = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature"},
      {NID_ext_key_usage, "serverAuth"},
  };
  if (!alt_names.empty()) extensions.emplace_back(NID_subject_alt_name, alt_names);
  for (const auto& [nid, value] : extensions) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &v3, nid, value.c_str());
    if (extension == nullptr) {
      return InvalidArgumentError("self-signed certificate: bad extension " + value);
    }
    X509_add_ext(cert.get(), extension, -1);
    X509_EXTENSION_free(extension);
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) {
    return InternalError("cannot sign the self-signed certificate");
  }
  return TlsIdentity{ToPem(cert.get()), ToPem(key.get())};
}

struct ServingCertificate::Loaded {
  X509Ptr leaf;
  ChainPtr chain;  // the intermediates after the leaf; may be empty
  KeyPtr key;
  std::string cert_pem;

  // InvalidArgument, naming `cert_what` or `key_what`, when the PEM does not load.
  static StatusOr<std::shared_ptr<const Loaded>> Parse(const TlsIdentity& identity,
                                                       const std::string& cert_what,
                                                       const std::string& key_what) {
    auto loaded = std::make_shared<Loaded>();
    BioPtr cert_bio = MemoryBio(identity.cert_pem);
    loaded->leaf.reset(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
    if (!loaded->leaf) return InvalidArgumentError(cert_what + " holds no PEM certificate");
    loaded->chain.reset(sk_X509_new_null());
    while (X509* next = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
      sk_X509_push(loaded->chain.get(), next);
    }
    ERR_clear_error();  // the read past the last certificate
    BioPtr key_bio = MemoryBio(identity.key_pem);
    loaded->key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
    if (!loaded->key) return InvalidArgumentError(key_what + " holds no PEM private key");
    if (X509_check_private_key(loaded->leaf.get(), loaded->key.get()) != 1) {
      ERR_clear_error();
      return InvalidArgumentError(key_what + " does not match the certificate of " + cert_what);
    }
    loaded->cert_pem = identity.cert_pem;
    return std::shared_ptr<const Loaded>(std::move(loaded));
  }
};

StatusOr<TlsIdentity> ReadTlsIdentity(const std::string& cert_file, const std::string& key_file) {
  StatusOr<std::string> cert = ReadSmallFile(cert_file);
  if (!cert.ok()) return cert.status();
  StatusOr<std::string> key = ReadSmallFile(key_file);
  if (!key.ok()) return key.status();
  TlsIdentity identity{*cert, *key};
  StatusOr<std::shared_ptr<const ServingCertificate::Loaded>> loaded =
      ServingCertificate::Loaded::Parse(identity, cert_file, key_file);
  if (!loaded.ok()) return loaded.status();
  return identity;
}

ServingCertificate::ServingCertificate(std::shared_ptr<const Loaded> loaded, std::string cert_file,
                                       std::string key_file, const Clock* clock,
                                       double reload_seconds)
    : loaded_(std::move(loaded)),
      cert_file_(std::move(cert_file)),
      key_file_(std::move(key_file)),
      clock_(clock),
      reload_seconds_(reload_seconds) {
  if (clock_ != nullptr) {
    checked_at_ = clock_->MonotonicSeconds();
    stamp_ = Stamp(cert_file_, key_file_);
  }
}

ServingCertificate::~ServingCertificate() = default;

StatusOr<std::unique_ptr<ServingCertificate>> ServingCertificate::Fixed(
    const TlsIdentity& identity) {
  StatusOr<std::shared_ptr<const Loaded>> loaded =
      Loaded::Parse(identity, "the certificate", "the key");
  if (!loaded.ok()) return loaded.status();
  return std::unique_ptr<ServingCertificate>(new ServingCertificate(*loaded, "", "", nullptr, 0));
}

StatusOr<std::unique_ptr<ServingCertificate>> ServingCertificate::FromFiles(
    const std::string& cert_file, const std::string& key_file, const Clock& clock,
    double reload_seconds) {
  StatusOr<TlsIdentity> identity = ReadTlsIdentity(cert_file, key_file);
  if (!identity.ok()) return identity.status();
  StatusOr<std::shared_ptr<const Loaded>> loaded = Loaded::Parse(*identity, cert_file, key_file);
  if (!loaded.ok()) return loaded.status();
  return std::unique_ptr<ServingCertificate>(
      new ServingCertificate(*loaded, cert_file, key_file, &clock, reload_seconds));
}

std::shared_ptr<const ServingCertificate::Loaded> ServingCertificate::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  if (clock_ == nullptr) return loaded_;
  const double now = clock_->MonotonicSeconds();
  if (now - checked_at_ < reload_seconds_) return loaded_;
  checked_at_ = now;
  std::string stamp = Stamp(cert_file_, key_file_);
  if (stamp == stamp_) return loaded_;
  // A Secret volume swaps both files at once; a pair caught halfway does not match and is
  // retried at the next check.
  StatusOr<TlsIdentity> identity = ReadTlsIdentity(cert_file_, key_file_);
  if (!identity.ok()) return loaded_;
  StatusOr<std::shared_ptr<const Loaded>> loaded = Loaded::Parse(*identity, cert_file_, key_file_);
  if (!loaded.ok()) return loaded_;
  loaded_ = *loaded;
  stamp_ = stamp;
  return loaded_;
}

std::string ServingCertificate::CertificatePem() { return Current()->cert_pem; }

int ServingCertificate::OnCertificate(ssl_st* ssl, void* self) {
  std::shared_ptr<const Loaded> loaded = static_cast<ServingCertificate*>(self)->Current();
  // override=1: replaces what the context installed.
  return SSL_use_cert_and_key(ssl, loaded->leaf.get(), loaded->key.get(), loaded->chain.get(), 1) ==
                 1
             ? 1
             : 0;
}

bool ServingCertificate::Install(ssl_ctx_st* ctx) {
  std::shared_ptr<const Loaded> loaded = Current();
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return false;
  if (SSL_CTX_use_cert_and_key(ctx, loaded->leaf.get(), loaded->key.get(), loaded->chain.get(),
                               1) != 1) {
    return false;
  }
  SSL_CTX_set_cert_cb(ctx, &ServingCertificate::OnCertificate, this);
  return true;
}

}  // namespace bsw::observability
