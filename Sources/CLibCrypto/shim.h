// The parts of the system's OpenSSL libcrypto that PortcullisCrypto calls
// (RSA keys and signatures). The package finds it with pkg-config (libcrypto,
// from Debian's libssl-dev) and the binary needs libcrypto.so.3 (libssl3) at run time.
#ifndef PORTCULLIS_CLIBCRYPTO_SHIM_H
#define PORTCULLIS_CLIBCRYPTO_SHIM_H

#include <openssl/opensslv.h>

// The signer relies on OpenSSL 3's provider API and on its EVP_PKEY being
// shareable across threads for signing, each call with its own context.
#if OPENSSL_VERSION_MAJOR < 3
#error "Portcullis needs OpenSSL 3's libcrypto (Debian/Ubuntu: apt-get install libssl-dev)"
#endif

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#endif
