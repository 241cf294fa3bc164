#include "plan/model/slicing.h"

#include <cmath>
#include <numeric>

#include "base/error.h"

namespace dynacomm::plan {

Slicing Slicing::make(const ModelProfile& profile, std::int64_t atom_params) {
  std::vector<std::int64_t> params, bytes;
  for (const UnitProfile& u : profile.units) {
    params.push_back(u.params);
    bytes.push_back(u.bytes);
  }
  return build(params, bytes, atom_params);
}

Slicing Slicing::build(const std::vector<std::int64_t>& params,
                       const std::vector<std::int64_t>& bytes, std::int64_t atom_params) {
  if (atom_params < 0)
    throw InvalidInput("slice size must be >= 0 parameters (0: whole units), got " +
                       std::to_string(atom_params));
  Slicing s;
  s.atom_params = atom_params;
  s.unit_params_ = params;
  s.unit_bytes_ = bytes;
  for (std::size_t u = 0; u < params.size(); ++u) {
    s.first_atom.push_back(s.num_atoms());
    if (atom_params == 0 || params[u] <= atom_params) {
      s.atoms.push_back({static_cast<int>(u), 0, params[u], bytes[u]});
      continue;
    }
    std::int64_t bytes_left = bytes[u];
    for (std::int64_t at = 0; at < params[u]; at += atom_params) {
      const std::int64_t n = std::min(atom_params, params[u] - at);
      // Bytes in proportion (float32: 4 per parameter); the last atom takes the rest.
      const std::int64_t b = at + n == params[u] ? bytes_left : bytes[u] * n / params[u];
      s.atoms.push_back({static_cast<int>(u), at, n, b});
      bytes_left -= b;
    }
  }
  s.first_atom.push_back(s.num_atoms());
  return s;
}

ModelProfile Slicing::atom_profile(const ModelProfile& profile) const {
  ModelProfile p = profile;
  p.units.clear();
  for (int a = 0; a < num_atoms(); ++a) {
    const Atom& atom = atoms[static_cast<std::size_t>(a)];
    const UnitProfile& unit = profile.units[static_cast<std::size_t>(atom.unit)];
    const bool last = a == last_atom(atom.unit);
    const bool whole = first_atom[static_cast<std::size_t>(atom.unit)] == a && last;
    p.units.push_back({whole ? unit.name
                             : unit.name + "[" + std::to_string(atom.offset) + ":" +
                                   std::to_string(atom.offset + atom.params) + "]",
                       atom.params, atom.bytes, last ? unit.forward_ms : 0.0,
                       last ? unit.backward_ms : 0.0});
    if (unit.push_bytes >= 0 || unit.decode_ms > 0) {  // compressed: its share of the unit's
      const double share =
          unit.params > 0 ? static_cast<double>(atom.params) / static_cast<double>(unit.params) : 1;
      p.units.back().push_bytes =
          unit.push_bytes >= 0 ? std::llround(static_cast<double>(unit.push_bytes) * share) : -1;
      p.units.back().decode_ms = unit.decode_ms * share;
    }
    if (unit.pull_bytes >= 0) {
      const double share =
          unit.params > 0 ? static_cast<double>(atom.params) / static_cast<double>(unit.params) : 1;
      p.units.back().pull_bytes = std::llround(static_cast<double>(unit.pull_bytes) * share);
    }
  }
  return p;
}

Plan Slicing::lift(const Plan& plan) const {
  if (plan.atom_params == atom_params) return plan;
  if (plan.atom_params != 0 && (atom_params == 0 || plan.atom_params % atom_params != 0))
    throw InvalidInput("plan '" + plan.scheduler + "' is sliced into atoms of " +
                       std::to_string(plan.atom_params) + " parameters, which atoms of " +
                       std::to_string(atom_params) + " cannot express");
  const Slicing coarse = build(unit_params_, unit_bytes_, plan.atom_params);
  // The fine atom holding parameter `at` of unit u.
  auto fine = [&](int u, std::int64_t at) {
    return first_atom[static_cast<std::size_t>(u)] +
           static_cast<int>(atom_params > 0 ? at / atom_params : 0);
  };
  Plan p = plan;
  p.atom_params = atom_params;
  auto lift_all = [&](std::vector<Segment>& segments) {
    for (Segment& s : segments) {
      if (s.first < 0 || s.last >= coarse.num_atoms())
        throw InvalidInput("plan '" + plan.scheduler + "': unit out of range");
      const Atom& a = coarse.atoms[static_cast<std::size_t>(s.first)];
      const Atom& b = coarse.atoms[static_cast<std::size_t>(s.last)];
      s = {fine(a.unit, a.offset),
           fine(b.unit, b.offset + std::max<std::int64_t>(b.params, 1) - 1)};
    }
  };
  lift_all(p.pull);
  lift_all(p.push);
  return p;
}

Plan priority_plan(const Slicing& slicing, std::int64_t credit_bytes) {
  Plan p;
  for (int a = 0; a < slicing.num_atoms(); ++a) p.pull.push_back({a, a});
  for (int a = slicing.num_atoms() - 1; a >= 0; --a) p.push.push_back({a, a});
  p.full_duplex = true;
  p.atom_params = slicing.atom_params;
  p.credit_bytes = credit_bytes;
  return p;
}

std::int64_t common_atom_params(const std::vector<std::int64_t>& slice_params) {
  std::int64_t g = 0;
  for (std::int64_t s : slice_params)
    if (s > 0) g = std::gcd(g, s);
  return g;
}

}  // namespace dynacomm::plan
