#pragma once
// Whether the test runs under AddressSanitizer, whose own SIGSEGV report replaces the process's
// death by the signal (death tests expect one or the other).

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
inline constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
inline constexpr bool kAddressSanitizer = false;
#endif
