#include "SimdjsonAnchor.h"

// As Debian and Homebrew build the library (its pkg-config flags say so): the same class layouts.
#define SIMDJSON_THREADS_ENABLED 1
#include <simdjson.h>

#include <cstring>
#include <string>
#include <new>

struct simdjson_anchor_parser {
    simdjson::dom::parser parser;
};

size_t simdjson_anchor_padding(void) { return simdjson::SIMDJSON_PADDING; }

simdjson_anchor_parser *simdjson_anchor_parser_create(void) { return new (std::nothrow) simdjson_anchor_parser(); }

simdjson_anchor_parser *simdjson_anchor_parser_create_with_kernel(const char *kernel) {
    const simdjson::implementation *pinned = simdjson::get_available_implementations()[kernel];
    if (pinned == nullptr || !pinned->supported_by_runtime_system()) return nullptr;
    auto *parser = new (std::nothrow) simdjson_anchor_parser();
    if (parser == nullptr) return nullptr;
    // A DOM parser takes the active kernel when it first allocates and keeps it when it grows, so
    // the kernel is swapped in for that allocation only (the bench makes its parsers on one thread).
    const simdjson::implementation *best = simdjson::get_active_implementation();
    simdjson::get_active_implementation() = pinned;
    simdjson::error_code error = parser->parser.allocate(1 << 16);
    simdjson::get_active_implementation() = best;
    if (error != simdjson::SUCCESS) {
        delete parser;
        return nullptr;
    }
    return parser;
}

const char *simdjson_anchor_best_kernel(void) {
    static const std::string name = simdjson::get_active_implementation()->name();
    return name.c_str();
}

const char *simdjson_anchor_best_kernel_description(void) {
    static const std::string description = simdjson::get_active_implementation()->description();
    return description.c_str();
}

void simdjson_anchor_parser_destroy(simdjson_anchor_parser *parser) { delete parser; }

// The same reads as the bench's walk of a PushCore document (Benchmarks/bench/Baselines.swift).
static uint64_t touch(simdjson::dom::element element) {
    using simdjson::dom::element_type;
    switch (element.type()) {
    case element_type::OBJECT: {
        uint64_t checksum = 0;
        for (auto field : simdjson::dom::object(element)) {
            checksum += field.key.size() + touch(field.value);
        }
        return checksum;
    }
    case element_type::ARRAY: {
        uint64_t checksum = 0;
        for (auto value : simdjson::dom::array(element)) checksum += touch(value);
        return checksum;
    }
    case element_type::STRING: {
        std::string_view text = std::string_view(element);
        return text.size() + (text.empty() ? 0 : uint8_t(text[0]));
    }
    case element_type::INT64: return uint64_t(int64_t(element));
    case element_type::UINT64: return uint64_t(element);
    case element_type::DOUBLE: {
        double value = double(element);
        uint64_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        return bits;
    }
    case element_type::BOOL: return bool(element) ? 1 : 2;
    case element_type::NULL_VALUE: return 3;
    }
    return 0;
}

int64_t simdjson_anchor_parse_walk(simdjson_anchor_parser *parser, const uint8_t *bytes, size_t length) {
    simdjson::dom::element root;
    // realloc_if_needed = false: the caller's buffer already has the padding, as in a server that
    // reads requests into padded buffers; simdjson copies nothing.
    if (parser->parser.parse(bytes, length, false).get(root) != simdjson::SUCCESS) return -1;
    // Wrapped to keep the checksum non-negative: -1 means refused.
    return int64_t(touch(root) >> 1);
}
