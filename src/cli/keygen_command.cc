// `dynacomm keygen`: a CURVE key pair for the PS or a worker (net/curve.h).
#include <sys/stat.h>

#include <cstdio>
#include <memory>

#include "base/error.h"
#include "cli/commands.h"
#include "net/curve.h"

namespace dynacomm::cli {

void add_keygen_command(CLI::App& app) {
  struct Flags {
    std::string out;
    bool force = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "keygen",
      "Make a CURVE key pair: OUT.key (secret, for --key) and OUT.pub (for the PS's --allow "
      "list, or a worker's --ps-key)");
  cmd->add_option("--out", f->out, "Files to write: OUT.key and OUT.pub")->required();
  cmd->add_flag("--force", f->force, "Replace key files that exist");
  cmd->callback([f]() {
    struct stat st;
    for (const char* ext : {".key", ".pub"})
      if (!f->force && ::stat((f->out + ext).c_str(), &st) == 0)
        throw InvalidInput(f->out + ext + " exists; --force replaces it");
    const net::CurveKeyPair keys = net::make_keypair();
    net::write_keypair(f->out, keys);
    std::printf("wrote %s.key (secret: keep it on its machine) and %s.pub; public key %s\n",
                f->out.c_str(), f->out.c_str(), keys.public_key.c_str());
  });
}

}  // namespace dynacomm::cli
