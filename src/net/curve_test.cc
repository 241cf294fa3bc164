#include "net/curve.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "base/error.h"

namespace dynacomm::net {
namespace {

std::string temp(const std::string& name) {
  return ::testing::TempDir() + "dynacomm_curve_" + std::to_string(::getpid()) + "_" + name;
}

TEST(Curve, KeyFilesRoundTripAndTheSecretIsPrivate) {
  const std::string prefix = temp("worker");
  const CurveKeyPair k = make_keypair();
  write_keypair(prefix, k);
  struct stat st;
  ASSERT_EQ(::stat((prefix + ".key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const CurveKeyPair back = read_keypair(prefix + ".key");
  EXPECT_EQ(back.public_key, k.public_key);
  EXPECT_EQ(back.secret_key, k.secret_key);
  EXPECT_EQ(read_public_key(prefix + ".pub"), k.public_key);
  EXPECT_EQ(read_public_key(prefix + ".key"), k.public_key);
  // A key pair whose halves do not belong together, and garbage, are refused.
  std::ofstream(prefix + ".bad") << "public " << make_keypair().public_key << "\nsecret "
                                 << k.secret_key << "\n";
  EXPECT_THROW(read_keypair(prefix + ".bad"), InvalidInput);
  std::ofstream(prefix + ".junk") << "hello\n";
  EXPECT_THROW(read_keypair(prefix + ".junk"), InvalidInput);
  EXPECT_THROW(read_public_key(prefix + ".junk"), InvalidInput);
  EXPECT_THROW(read_keypair(prefix + ".missing"), InvalidInput);
  for (const char* ext : {".key", ".pub", ".bad", ".junk"}) std::remove((prefix + ext).c_str());
}

TEST(Curve, TheAllowListBindsEachKeyToARankAndNamesABadLine) {
  const std::string path = temp("allow.txt"), pub = temp("w1");
  const CurveKeyPair a = make_keypair(), b = make_keypair();
  write_keypair(pub, b);
  std::ofstream(path) << "# the job's workers\n0 " << a.public_key << "\n\n1 " << pub
                      << ".pub  # from its file\n";
  const AllowList list = AllowList::read(path);
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(list.rank_of(a.public_key), 0);
  EXPECT_EQ(list.rank_of(b.public_key), 1);
  EXPECT_FALSE(list.rank_of(make_keypair().public_key));
  // '#' is a Z85 character: inside a key it is no comment.
  CurveKeyPair hash = make_keypair();
  while (hash.public_key.find('#') == std::string::npos) hash = make_keypair();
  std::ofstream(path) << "2 " << hash.public_key << " # it has a '#'\n";
  EXPECT_EQ(AllowList::read(path).rank_of(hash.public_key), 2);
  std::ofstream(path) << "0 " << a.public_key << "\nzero " << b.public_key << "\n";
  try {
    AllowList::read(path);
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2: want \"RANK PUBLIC-KEY\""), std::string::npos)
        << e.what();
  }
  std::ofstream(path) << "0 " << a.public_key << "\n1 " << a.public_key << "\n";
  EXPECT_THROW(AllowList::read(path), InvalidInput) << "one key, two ranks";
  std::ofstream(path) << "# nobody\n";
  EXPECT_THROW(AllowList::read(path), InvalidInput);
  for (const std::string& f : {path, pub + ".key", pub + ".pub"}) std::remove(f.c_str());
}

TEST(Curve, LoopbackIsThisMachineOnly) {
  EXPECT_TRUE(is_loopback("tcp://127.0.0.1:7070"));
  EXPECT_TRUE(is_loopback("tcp://localhost:0"));
  EXPECT_TRUE(is_loopback("tcp://[::1]:7070"));
  EXPECT_TRUE(is_loopback("inproc://ps"));
  EXPECT_FALSE(is_loopback("tcp://0.0.0.0:7070"));
  EXPECT_FALSE(is_loopback("tcp://*:7070"));
  EXPECT_FALSE(is_loopback("tcp://10.0.0.1:7070"));
}

}  // namespace
}  // namespace dynacomm::net
