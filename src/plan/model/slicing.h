// Slices: plans that split a unit across transmissions (P3, ByteScheduler).
//
// A slicing cuts every unit into atoms of `atom_params` parameters from the unit's start
// (the last atom of a unit holds the remainder; a unit no larger than one atom is one
// atom). Atoms are in model order, so a range of atoms is a contiguous range of the
// model's parameters, and a Plan whose segments index atoms (Plan::atom_params > 0) is an
// ordinary plan over the atom profile: the same simulators and checks apply. In the atom
// profile a unit's forward and backward times sit on its last (highest) atom, the others
// taking no time: forward of a unit waits for all its atoms, and backward reaches that
// atom first, so all the unit's gradients are ready together. Predictions over atoms
// therefore equal those over units for unsliced plans.
//
// The runtime (worker, PS, wire) works on the job's atoms throughout: whole-unit plans are
// lifted to atom ranges, and the PS keeps one version per atom.
//
//   Slicing s = Slicing::make(profile, 40000);          // resnet18: 332 atoms
//   ModelProfile atoms = s.atom_profile(profile);
//   Plan lifted = s.lift(make_plan("dynacomm", profile, link, {}));   // same prediction
#pragma once

#include <cstdint>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"

namespace dynacomm::plan {

struct Atom {
  int unit = 0;
  std::int64_t offset = 0;  // first parameter within the unit
  std::int64_t params = 0;
  std::int64_t bytes = 0;
};

struct Slicing {
  std::int64_t atom_params = 0;  // 0: one atom per unit
  std::vector<Atom> atoms;
  std::vector<int> first_atom;  // per unit, and num_units -> atoms.size() at the end

  // Throws InvalidInput for a negative atom size.
  static Slicing make(const ModelProfile& profile, std::int64_t atom_params);
  int num_atoms() const { return static_cast<int>(atoms.size()); }
  int last_atom(int unit) const { return first_atom[static_cast<std::size_t>(unit) + 1] - 1; }

  ModelProfile atom_profile(const ModelProfile& profile) const;
  // A plan over units, or over coarser atoms (a multiple of these), -> the same plan over
  // these atoms; a plan already over them is returned as is. Throws InvalidInput for a plan
  // over atoms these cannot express.
  Plan lift(const Plan& plan) const;

 private:
  std::vector<std::int64_t> unit_params_, unit_bytes_;
  static Slicing build(const std::vector<std::int64_t>& params,
                       const std::vector<std::int64_t>& bytes, std::int64_t atom_params);
};

// Every atom its own transmission both ways, full duplex, scheduled by priority with this
// credit (the shape of the P3 and ByteScheduler plans, and of dynacomm-fd's priority family).
Plan priority_plan(const Slicing& slicing, std::int64_t credit_bytes);

// The atom size that serves every one of these slice sizes (their greatest common
// divisor; 0 when none is sliced).
std::int64_t common_atom_params(const std::vector<std::int64_t>& slice_params);

}  // namespace dynacomm::plan
