// The simulator's secret file (device/secret_file.hpp): what a ratcheting device boots from. A
// write replaces the stored pair whole; a file of another material (the device was rotated)
// is not used; a damaged file is an error, never a secret of zeros.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "device/secret_file.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::device {
namespace {

DevSecret secret_of(std::uint8_t fill) {
  std::array<std::uint8_t, kDevSecretSize> bytes{};
  bytes.fill(fill);
  return DevSecret::from(bytes);
}

DeviceCredentials provisioned() {
  DeviceCredentials c;
  EXPECT_EQ(c.dev_id.assign("valve-1"), Error::ok);
  c.dev_secret = secret_of(0x11);
  return c;
}

TEST(SecretFile, TheLastWriteIsWhatTheDeviceBootsFrom) {
  dsekp::test::TempDir dir;
  DeviceCredentials c = provisioned();
  FileSecretStore store(dir.path(), c.dev_id, 7);
  EXPECT_FALSE(store.load(c)) << "nothing stored: the provisioned secret";
  EXPECT_EQ(c.epoch, 0u);
  ASSERT_TRUE(store.store_secret(secret_of(0x22), 1));
  ASSERT_TRUE(store.store_secret(secret_of(0x33), 2));
  EXPECT_EQ(store.writes(), 2u);
  ASSERT_TRUE(FileSecretStore(dir.path(), c.dev_id, 7).load(c));
  EXPECT_EQ(c.epoch, 2u);
  EXPECT_TRUE(constant_time_equal(c.dev_secret.view(), secret_of(0x33).view()));
  struct stat st {};
  ASSERT_EQ(::stat(store.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(store.path().string() + ".new"));
}

TEST(SecretFile, AFileOfAnotherMaterialIsNotUsed) {
  dsekp::test::TempDir dir;
  DeviceCredentials c = provisioned();
  ASSERT_TRUE(FileSecretStore(dir.path(), c.dev_id, 7).store_secret(secret_of(0x22), 5));
  // Rotated: the material's generation is new, the chain starts again from its secret.
  FileSecretStore rotated(dir.path(), c.dev_id, 9);
  EXPECT_FALSE(rotated.load(c));
  EXPECT_EQ(c.epoch, 0u);
  EXPECT_TRUE(constant_time_equal(c.dev_secret.view(), provisioned().dev_secret.view()));
  ASSERT_TRUE(rotated.store_secret(secret_of(0x44), 1));
  ASSERT_TRUE(rotated.load(c));
  EXPECT_EQ(c.epoch, 1u);
}

TEST(SecretFile, ADamagedFileIsAnError) {
  dsekp::test::TempDir dir;
  DeviceCredentials c = provisioned();
  FileSecretStore store(dir.path(), c.dev_id, 7);
  std::ofstream(store.path()) << "short";
  EXPECT_THROW((void)store.load(c), SecretFileError);
  EXPECT_EQ(c.epoch, 0u);
}

TEST(SecretFile, AWriteThatCannotHappenLeavesTheOldPair) {
  dsekp::test::TempDir dir;
  DeviceCredentials c = provisioned();
  FileSecretStore missing(dir.path() / "no-such-dir", c.dev_id, 7);
  EXPECT_FALSE(missing.store_secret(secret_of(0x22), 1));
  EXPECT_EQ(missing.writes(), 0u);
  EXPECT_FALSE(missing.load(c));
}

}  // namespace
}  // namespace dsekp::device
