// The in-place forms of the elementwise functions, declared in tensor.hpp
// (x.exp_(), x.pow_(2), x.addcdiv_(t1, t2, value), x.cumsum_(0), ...).
// Each writes its function of this tensor back with update(), which is
// copy_ with the in-place result-type rule. copy_ records the write when
// autograd is involved and, where the written expression reads this
// tensor, reads recorded copies of the old values instead
// (autograd/in_place.hpp). An op whose result is computed whole and whose
// node keeps its input (cumprod, renorm) is given such a copy up front.
#pragma once
#include <optional>
#include <string_view>

#include "aliases.hpp"
#include "autograd/in_place.hpp"
#include "scan.hpp"
#include "shape_ops.hpp"
#include "special.hpp"
#include "statistics.hpp"

namespace tsr {

// ----- one operand ------------------------------------------------------------
template <class T> template <class U> Tensor<T>& Tensor<T>::abs_() { return update(tsr::abs(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::absolute_() { return update(tsr::absolute(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::neg_() { return update(tsr::negative(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::negative_() { return update(tsr::negative(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::sign_() { return update(tsr::sign(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::sgn_() { return update(tsr::sgn(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::square_() { return update(tsr::square(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::sqrt_() { return update(tsr::sqrt(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::rsqrt_() { return update(tsr::rsqrt(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::reciprocal_() { return update(tsr::reciprocal(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::exp_() { return update(tsr::exp(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::exp2_() { return update(tsr::exp2(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::expm1_() { return update(tsr::expm1(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::log_() { return update(tsr::log(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::log2_() { return update(tsr::log2(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::log10_() { return update(tsr::log10(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::log1p_() { return update(tsr::log1p(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::sin_() { return update(tsr::sin(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::cos_() { return update(tsr::cos(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::tan_() { return update(tsr::tan(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::asin_() { return update(tsr::asin(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::acos_() { return update(tsr::acos(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::atan_() { return update(tsr::atan(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::sinh_() { return update(tsr::sinh(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::cosh_() { return update(tsr::cosh(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::tanh_() { return update(tsr::tanh(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::asinh_() { return update(tsr::asinh(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::acosh_() { return update(tsr::acosh(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::atanh_() { return update(tsr::atanh(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::arcsin_() { return update(tsr::arcsin(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::arccos_() { return update(tsr::arccos(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::arctan_() { return update(tsr::arctan(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::arcsinh_() { return update(tsr::arcsinh(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::arccosh_() { return update(tsr::arccosh(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::arctanh_() { return update(tsr::arctanh(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::sigmoid_() { return update(tsr::sigmoid(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::relu_() { return update(tsr::relu(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::ceil_() { return update(tsr::ceil(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::floor_() { return update(tsr::floor(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::round_() { return update(tsr::round(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::trunc_() { return update(tsr::trunc(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::fix_() { return update(tsr::fix(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::frac_() { return update(tsr::frac(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::erf_() { return update(tsr::erf(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::erfc_() { return update(tsr::erfc(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::erfinv_() { return update(tsr::erfinv(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::lgamma_() { return update(tsr::lgamma(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::digamma_() { return update(tsr::digamma(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::i0_() { return update(tsr::i0(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::sinc_() { return update(tsr::sinc(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::deg2rad_() { return update(tsr::deg2rad(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::rad2deg_() { return update(tsr::rad2deg(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::logit_() { return update(tsr::logit(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::bitwise_not_() { return update(tsr::bitwise_not(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::logical_not_() { return update(tsr::logical_not(*this)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::round_(int64_t decimals) {
  return update(special::round(*this, decimals));
}
template <class T> template <class U> Tensor<T>& Tensor<T>::logit_(double eps) {
  return update(tsr::logit(*this, eps));
}
template <class T> template <class U> Tensor<T>& Tensor<T>::polygamma_(int64_t n) {
  return update(tsr::polygamma(n, *this));
}
template <class T> template <class U> Tensor<T>& Tensor<T>::mvlgamma_(int64_t p) {
  return update(tsr::mvlgamma(*this, p));
}
template <class T> template <class U>
Tensor<T>& Tensor<T>::nan_to_num_(double nan, std::optional<double> posinf, std::optional<double> neginf) {
  return update(tsr::nan_to_num(*this, nan, posinf, neginf));
}

// ----- two operands -----------------------------------------------------------
template <class T> template <class E, class S> Tensor<T>& Tensor<T>::add_(const E& e, S alpha) {
  return update(tsr::add(*this, e, alpha));
}
template <class T> template <class E, class S> Tensor<T>& Tensor<T>::sub_(const E& e, S alpha) {
  return update(tsr::sub(*this, e, alpha));
}
template <class T> template <class E, class S> Tensor<T>& Tensor<T>::subtract_(const E& e, S alpha) {
  return update(tsr::sub(*this, e, alpha));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::pow_(const E& e) { return update(tsr::pow(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::atan2_(const E& e) { return update(tsr::atan2(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::arctan2_(const E& e) {
  return update(tsr::arctan2(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::remainder_(const E& e) {
  return update(tsr::remainder(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::fmod_(const E& e) { return update(tsr::fmod(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::hypot_(const E& e) { return update(tsr::hypot(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::copysign_(const E& e) {
  return update(tsr::copysign(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::nextafter_(const E& e) {
  return update(tsr::nextafter(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::xlogy_(const E& e) { return update(tsr::xlogy(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::ldexp_(const E& e) { return update(tsr::ldexp(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::igamma_(const E& e) {
  return update(tsr::igamma(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::igammac_(const E& e) {
  return update(tsr::igammac(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::heaviside_(const E& e) {
  return update(tsr::heaviside(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::gcd_(const E& e) { return update(tsr::gcd(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::lcm_(const E& e) { return update(tsr::lcm(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::multiply_(const E& e) {
  return update(tsr::multiply(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::divide_(const E& e) {
  return update(tsr::divide(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::true_divide_(const E& e) {
  return update(tsr::true_divide(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::floor_divide_(const E& e) {
  return update(tsr::floor_divide(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::logical_and_(const E& e) {
  return update(tsr::logical_and(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::logical_or_(const E& e) {
  return update(tsr::logical_or(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::logical_xor_(const E& e) {
  return update(tsr::logical_xor(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::bitwise_and_(const E& e) {
  return update(tsr::bitwise_and(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::bitwise_or_(const E& e) {
  return update(tsr::bitwise_or(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::bitwise_xor_(const E& e) {
  return update(tsr::bitwise_xor(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::bitwise_left_shift_(const E& e) {
  return update(tsr::bitwise_left_shift(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::bitwise_right_shift_(const E& e) {
  return update(tsr::bitwise_right_shift(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::eq_(const E& e) { return update(tsr::eq(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::ne_(const E& e) { return update(tsr::ne(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::lt_(const E& e) { return update(tsr::lt(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::le_(const E& e) { return update(tsr::le(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::gt_(const E& e) { return update(tsr::gt(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::ge_(const E& e) { return update(tsr::ge(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::not_equal_(const E& e) {
  return update(tsr::not_equal(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::less_(const E& e) { return update(tsr::less(*this, e)); }
template <class T> template <class E> Tensor<T>& Tensor<T>::less_equal_(const E& e) {
  return update(tsr::less_equal(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::greater_(const E& e) {
  return update(tsr::greater(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::greater_equal_(const E& e) {
  return update(tsr::greater_equal(*this, e));
}
template <class T>
template <class E>
Tensor<T>& Tensor<T>::float_power_(const E& e) {
  static_assert(std::is_same_v<T, double>,
                "the base given to float_power_ has a dtype other than Double but the operation's result requires "
                "dtype Double");
  return update(tsr::float_power(*this, e));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::div_(const E& e, std::string_view rounding_mode) {
  return update(tsr::div(*this, e, rounding_mode));
}
template <class T> template <class E> Tensor<T>& Tensor<T>::divide_(const E& e, std::string_view rounding_mode) {
  return update(tsr::div(*this, e, rounding_mode));
}
template <class T> template <class L> Tensor<T>& Tensor<T>::clamp_min_(const L& lo) {
  return update(tsr::clamp_min(*this, lo));
}
template <class T> template <class H> Tensor<T>& Tensor<T>::clamp_max_(const H& hi) {
  return update(tsr::clamp_max(*this, hi));
}
template <class T> template <class L, class H> Tensor<T>& Tensor<T>::clip_(const L& lo, const H& hi) {
  return update(tsr::clamp(*this, lo, hi));
}
template <class T> template <class E, class W> Tensor<T>& Tensor<T>::lerp_(const E& end, const W& weight) {
  return update(tsr::lerp(*this, end, weight));
}
template <class T> template <class A, class B> Tensor<T>& Tensor<T>::addcmul_(const A& t1, const B& t2, double value) {
  return update(tsr::addcmul(*this, t1, t2, value));
}
template <class T> template <class A, class B> Tensor<T>& Tensor<T>::addcdiv_(const A& t1, const B& t2, double value) {
  return update(tsr::addcdiv(*this, t1, t2, value));
}

// ----- along or across dims ---------------------------------------------------
namespace detail {
// This tensor's value as an op that keeps its input should read it: a
// recorded copy where the write will be recorded (the tensor is about to be
// overwritten, and the op's node would find it changed in backward), else
// the tensor itself.
template <class T>
Tensor<T> input_of_recorded_write(const Tensor<T>& t) {
  return in_place_records(t, t) ? copy_of_value(t) : t;
}
}  // namespace detail

template <class T> template <class U> Tensor<T>& Tensor<T>::tril_(int64_t k) { return update(tsr::tril(*this, k)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::triu_(int64_t k) { return update(tsr::triu(*this, k)); }
template <class T> template <class U> Tensor<T>& Tensor<T>::cumsum_(int64_t dim) {
  return update(tsr::cumsum(*this, dim));
}
template <class T> template <class U> Tensor<T>& Tensor<T>::cumprod_(int64_t dim) {
  return update(tsr::cumprod(detail::input_of_recorded_write(*this), dim));
}
template <class T> template <class U> Tensor<T>& Tensor<T>::renorm_(double p, int64_t dim, double maxnorm) {
  return update(tsr::renorm(detail::input_of_recorded_write(*this), p, dim, maxnorm));
}
template <class T> template <class U> Tensor<T>& Tensor<T>::fill_diagonal_(T value, bool wrap) {
  detail::check(dim() >= 2, "dimensions must larger than 1");
  for (int64_t d = 1; d < dim() && dim() > 2; ++d)
    detail::check(size(d) == size(0), "all dimensions of input must be of equal length");
  const int64_t height = size(0), width = size(1), diagonal = std::min(height, width);
  int64_t step = 0;  // from one diagonal element to the next
  for (int64_t d = 0; d < dim(); ++d) step += stride(d);
  as_strided({diagonal}, {step}, storage_offset()).fill_(value);
  if (wrap && dim() == 2 && height > width + 1) {
    const int64_t count = (numel() + width) / (width + 1) - diagonal;
    as_strided({count}, {step}, storage_offset() + stride(0) * (width + 1)).fill_(value);
  }
  return *this;
}

}  // namespace tsr
