#ifndef BSW_TESTS_UNIT_ADAPTERS_GZIP_H_
#define BSW_TESTS_UNIT_ADAPTERS_GZIP_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace bsw::prom {

// `text` as one gzip member.
inline std::string Gzip(const std::string& text) {
  z_stream stream{};
  EXPECT_EQ(
      deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY),
      Z_OK);
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

}  // namespace bsw::prom

#endif  // BSW_TESTS_UNIT_ADAPTERS_GZIP_H_
