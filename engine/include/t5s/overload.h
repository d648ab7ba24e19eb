#pragma once
// std::visit over several lambdas: Overload{[](const A&) {...}, [](const B&) {...}}.
namespace t5s {

template <class... Ts>
struct Overload : Ts... {
    using Ts::operator()...;
};
template <class... Ts>
Overload(Ts...) -> Overload<Ts...>;

}  // namespace t5s
