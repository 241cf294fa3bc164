// Run folders: where a training run leaves its results.
//
//   RunFolder run("runs/cnn");                  // creates it (and parents)
//   run.write_metrics_csv(header, rows);         // metrics.csv
//   run.write_json("summary.json", summary);
//   run.write_floats("weights.bin", weights);    // raw little-endian float32
//
// Every write goes to a temporary file first and is renamed into place, so an interrupted
// run never leaves a half-written file under the final name. Throws Error on I/O failure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dynacomm::report {

class RunFolder {
 public:
  explicit RunFolder(std::string path);
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

  void write_text(const std::string& name, const std::string& text) const;
  void write_json(const std::string& name, const nlohmann::json& j) const;
  void write_csv(const std::string& name, const std::vector<std::string>& header,
                 const std::vector<std::vector<double>>& rows) const;
  // The same with text cells; a cell holding a comma, quote or line break is quoted.
  void write_csv(const std::string& name, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) const;
  void write_floats(const std::string& name, const std::vector<float>& values) const;

 private:
  std::string path_;
};

// Reads a raw little-endian float32 file back; throws InvalidInput when the size is off.
std::vector<float> read_floats(const std::string& path);

}  // namespace dynacomm::report
