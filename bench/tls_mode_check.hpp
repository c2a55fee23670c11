// Checks that a finished handshake really was the TLS 1.3 mode it was configured as.
//
// Why: a benchmark that silently measured a different key exchange (a full handshake instead of a
// PSK one, psk_dhe_ke instead of psk_ke) would make the DSEKP comparison meaningless. Every timed
// handshake is checked against OpenSSL's own report, the verification run also against the wire.
#pragma once

#include <string>

#include "tls_handshake.hpp"
#include "tls_handshake_pump.hpp"
#include "tls_hello_inspect.hpp"

namespace dsekp::bench::detail {

// Empty when `facts` match `mode`; otherwise a description of every mismatch.
std::string check_facts(TlsMode mode, const HandshakeFacts& facts);

// Empty when the parsed hello messages match `mode`; otherwise a description of every mismatch.
std::string check_hellos(TlsMode mode, const HelloObservation& hellos);

// Short name of a group NID as returned by SSL_get_negotiated_group ("none" for 0).
std::string group_name(int nid);

}  // namespace dsekp::bench::detail
