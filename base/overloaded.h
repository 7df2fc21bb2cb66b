#ifndef BSW_BASE_OVERLOADED_H_
#define BSW_BASE_OVERLOADED_H_

namespace bsw {

// One callable of several lambdas, for std::visit over a variant: one lambda per alternative.
template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};

}  // namespace bsw

#endif  // BSW_BASE_OVERLOADED_H_
