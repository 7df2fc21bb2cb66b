#ifndef BSW_CONTRACT_TRAINER_EXIT_CODES_H_
#define BSW_CONTRACT_TRAINER_EXIT_CODES_H_

// Process exit codes of the trainer contract, shared by the trainer that exits with them and the
// operator that reads them. Header-only and dependency-free, so that neither side depends on the
// other.
namespace bsw {

inline constexpr int kExitOk = 0;        // finished, reached --until, or stopped and checkpointed
inline constexpr int kExitInternal = 1;  // anything else (e.g. a checkpoint that cannot be written)
inline constexpr int kExitBadInput = 2;  // bad flag, dataset or file
inline constexpr int kExitDiverged = 3;  // NaN/inf training loss

}  // namespace bsw

#endif  // BSW_CONTRACT_TRAINER_EXIT_CODES_H_
