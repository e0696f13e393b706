#include "core/graph/node_types.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace fb::graph {

std::string expandHome(std::string path)
{
    const char *home = std::getenv("HOME");
    if (home && *home && (path == "~" || path.starts_with("~/"))) path = home + path.substr(1);
    return path;
}

namespace {

constexpr std::pair<NodeRole, std::string_view> kRoles[] = {
    {NodeRole::Source, "source"}, {NodeRole::Transform, "transform"},
    {NodeRole::Input, "input"},   {NodeRole::Layer, "layer"},
    {NodeRole::Loss, "loss"},     {NodeRole::Optimizer, "optimizer"},
    {NodeRole::Train, "train"},   {NodeRole::Evaluate, "evaluate"},
};

} // namespace

std::string_view nodeRoleName(NodeRole role)
{
    for (const auto &[r, name] : kRoles)
        if (r == role) return name;
    return "?";
}

bool nodeRoleFromName(std::string_view name, NodeRole &role)
{
    for (const auto &[r, n] : kRoles)
        if (n == name) {
            role = r;
            return true;
        }
    return false;
}

std::string_view portTypeName(PortType type)
{
    switch (type) {
    case PortType::Samples:
        return "samples";
    case PortType::Tensor:
        return "tensor";
    case PortType::Loss:
        return "loss";
    case PortType::Optimizer:
        return "optimizer";
    case PortType::Model:
        return "model";
    case PortType::Metrics:
        return "metrics";
    }
    return "?";
}

std::string_view paramTypeName(ParamType type)
{
    switch (type) {
    case ParamType::Int:
        return "int";
    case ParamType::Float:
        return "float";
    case ParamType::Bool:
        return "bool";
    case ParamType::String:
        return "string";
    case ParamType::Enum:
        return "enum";
    case ParamType::Path:
        return "path";
    }
    return "?";
}

namespace {

// Shortest text that reads back as the same double ("128", "0.01", "1e-05"), whole numbers in
// full as people write range ends ("1000000", not "1e+06").
std::string numberText(double v)
{
    char buf[64];
    auto res = std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 1e15
                   ? std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v))
                   : std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

std::string joined(const std::vector<std::string> &items, std::string_view sep = ", ")
{
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += sep;
        out += items[i];
    }
    return out;
}

const PortSpec *findPort(const std::vector<PortSpec> &ports, std::string_view name)
{
    for (const PortSpec &p : ports)
        if (p.name == name) return &p;
    return nullptr;
}

} // namespace

std::string jsonText(const nlohmann::json &value, size_t maxLength)
{
    std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > maxLength) text = text.substr(0, maxLength) + "...";
    return text;
}

bool ParamSpec::hasRange() const
{
    return std::isfinite(min) || std::isfinite(max);
}

std::string ParamSpec::rangeText() const
{
    const bool lo = std::isfinite(min), hi = std::isfinite(max);
    if (lo && hi) {
        return std::string(minExclusive ? "(" : "[") + numberText(min) + ", " + numberText(max) +
               (maxExclusive ? ")" : "]");
    }
    if (lo) return std::string(minExclusive ? "> " : ">= ") + numberText(min);
    if (hi) return std::string(maxExclusive ? "< " : "<= ") + numberText(max);
    return {};
}

const PortSpec *NodeTypeSpec::input(std::string_view name) const
{
    return findPort(inputs, name);
}

const PortSpec *NodeTypeSpec::output(std::string_view name) const
{
    return findPort(outputs, name);
}

const ParamSpec *NodeTypeSpec::param(std::string_view name) const
{
    for (const ParamSpec &p : params)
        if (p.name == name) return &p;
    return nullptr;
}

void NodeTypeRegistry::add(NodeTypeSpec spec)
{
    for (NodeTypeSpec &t : m_types) {
        if (t.type == spec.type) {
            t = std::move(spec);
            return;
        }
    }
    m_types.push_back(std::move(spec));
}

const NodeTypeSpec *NodeTypeRegistry::find(std::string_view type) const
{
    for (const NodeTypeSpec &t : m_types)
        if (t.type == type) return &t;
    return nullptr;
}

namespace {

// Categories in the order their first type was added, so the listing follows the palette.
std::vector<std::string> categoriesOf(const NodeTypeRegistry &registry)
{
    std::vector<std::string> cats;
    for (const NodeTypeSpec &t : registry.all())
        if (std::find(cats.begin(), cats.end(), t.category) == cats.end())
            cats.push_back(t.category);
    return cats;
}

std::string padded(const std::string &s, size_t width)
{
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string paramTypeText(const ParamSpec &p)
{
    std::string out(paramTypeName(p.type));
    if (p.type == ParamType::Enum) out += " {" + joined(p.choices, "|") + "}";
    if (p.hasRange()) {
        out += ' ';
        out += p.rangeText();
    }
    return out;
}

} // namespace

std::string describeNodeTypes(const NodeTypeRegistry &registry)
{
    std::string out;
    for (const std::string &cat : categoriesOf(registry)) {
        out += "== " + cat + " ==\n\n";
        for (const NodeTypeSpec &t : registry.all()) {
            if (t.category != cat) continue;
            out += t.type + " - " + t.title + "\n";
            if (!t.help.empty()) out += "  " + t.help + "\n";

            size_t width = 0;
            for (const auto &p : t.inputs)
                width = std::max(width, p.name.size());
            for (const auto &p : t.outputs)
                width = std::max(width, p.name.size());
            for (const auto &p : t.params)
                width = std::max(width, p.name.size());
            width += 2;

            auto ports = [&](const char *heading, const std::vector<PortSpec> &list) {
                if (list.empty()) return;
                out += std::string("  ") + heading + ":\n";
                for (const PortSpec &p : list) {
                    out += "    " + padded(p.name, width) + std::string(portTypeName(p.type));
                    if (p.optional) out += " (optional)";
                    if (!p.help.empty()) out += "  " + p.help;
                    out += "\n";
                }
            };
            ports("inputs", t.inputs);
            ports("outputs", t.outputs);
            if (!t.params.empty()) {
                out += "  parameters:\n";
                for (const ParamSpec &p : t.params) {
                    out += "    " + padded(p.name, width) + paramTypeText(p) + ", default " +
                           jsonText(p.defaultValue) + "\n";
                    if (!p.help.empty()) out += "    " + std::string(width, ' ') + p.help + "\n";
                }
            }
            out += "\n";
        }
    }
    return out;
}

namespace {

// Markdown text inside a table cell: a '|' would end the cell, '*' and '`' could start emphasis
// or code ("C*H*W"), and '<' an HTML tag.
std::string markdownText(std::string_view text)
{
    std::string out;
    for (char c : text) {
        if (c == '\\' || c == '|' || c == '*' || c == '`' || c == '<') out += '\\';
        out += c;
    }
    return out;
}

// Letters and digits only, lower case: "Batch norm 2D" and "batchnorm2d" are the same words.
std::string wordsOf(std::string_view text)
{
    std::string out;
    for (char c : text)
        if (std::isalnum((unsigned char)c)) out += char(std::tolower((unsigned char)c));
    return out;
}

// What a type does in brief, when that fits in the table: the first sentence of its help, its
// trailing clauses dropped (after "; " or " (", then ", ", then ": ") until it is short, while
// what is left still says something; else its title if that says more than the type's name
// ("Cross-entropy loss"); else nothing. A sentence ends at ". " before a capital letter, so
// "e.g. a" does not end one.
std::string briefOf(const NodeTypeSpec &t)
{
    constexpr size_t kMaxBrief = 72, kMinBrief = 16;
    std::string brief = t.help;
    for (size_t i = 0; i + 2 < t.help.size(); ++i) {
        if (t.help[i] == '.' && t.help[i + 1] == ' ' &&
            std::isupper((unsigned char)t.help[i + 2])) {
            brief = t.help.substr(0, i + 1);
            break;
        }
    }
    if (!brief.empty() && brief.back() == '.') brief.pop_back();
    using Separators = std::vector<std::string_view>;
    for (const Separators &round : {Separators{"; ", " ("}, Separators{", "}, Separators{": "}}) {
        while (brief.size() > kMaxBrief) {
            size_t cut = 0; // the last separator of this round, if any
            for (std::string_view sep : round)
                if (const size_t at = brief.rfind(sep); at != std::string::npos)
                    cut = std::max(cut, at);
            if (cut < kMinBrief) break;
            brief.resize(cut);
        }
    }
    if (!brief.empty() && brief.size() <= kMaxBrief) return brief;
    return wordsOf(t.title) == wordsOf(t.type) ? std::string() : t.title;
}

} // namespace

std::string nodeTypesMarkdown(const NodeTypeRegistry &registry)
{
    std::string out = "| category | node types |\n|---|---|\n";
    for (const std::string &cat : categoriesOf(registry)) {
        std::vector<std::string> entries;
        for (const NodeTypeSpec &t : registry.all()) {
            if (t.category != cat) continue;
            std::string entry = "`" + t.type + "`";
            if (!t.params.empty()) {
                std::vector<std::string> names;
                for (const ParamSpec &p : t.params)
                    names.push_back(p.name);
                entry += " (" + joined(names) + ")";
            }
            if (const std::string brief = briefOf(t); !brief.empty())
                entry += ": " + markdownText(brief);
            entries.push_back(std::move(entry));
        }
        out += "| " + markdownText(cat) + " | " + joined(entries, "<br>") + " |\n";
    }
    return out;
}

nlohmann::json nodeTypesJson(const NodeTypeRegistry &registry)
{
    using nlohmann::json;
    auto portsJson = [](const std::vector<PortSpec> &list) {
        json arr = json::array();
        for (const PortSpec &p : list) {
            arr.push_back({{"name", p.name},
                           {"type", std::string(portTypeName(p.type))},
                           {"help", p.help},
                           {"optional", p.optional}});
        }
        return arr;
    };

    json types = json::array();
    for (const NodeTypeSpec &t : registry.all()) {
        json params = json::array();
        for (const ParamSpec &p : t.params) {
            json j = {{"name", p.name},
                      {"type", std::string(paramTypeName(p.type))},
                      {"default", p.defaultValue},
                      {"help", p.help}};
            if (std::isfinite(p.min)) {
                j["min"] = p.min;
                j["min_exclusive"] = p.minExclusive;
            }
            if (std::isfinite(p.max)) {
                j["max"] = p.max;
                j["max_exclusive"] = p.maxExclusive;
            }
            if (p.type == ParamType::Enum) j["choices"] = p.choices;
            if (p.runOnly) j["run_only"] = true;
            if (!p.atMost.empty()) j["at_most"] = p.atMost;
            if (p.numberList) j["number_list"] = true;
            params.push_back(std::move(j));
        }
        types.push_back({{"type", t.type},
                         {"category", t.category},
                         {"title", t.title},
                         {"help", t.help},
                         {"role", std::string(nodeRoleName(t.role))},
                         {"inputs", portsJson(t.inputs)},
                         {"outputs", portsJson(t.outputs)},
                         {"params", std::move(params)}});
    }
    return {{"format", "flowbench.node-types"}, {"version", 2}, {"node_types", std::move(types)}};
}

Result<NodeTypeRegistry> nodeTypesFromJson(const nlohmann::json &j)
{
    using nlohmann::json;
    // Read with throwing accessors inside one try: the file is ours (resources/node_types.json,
    // checked against the engine by test_node_types), so any fault is one message, not a crash.
    // The value of `kinds` whose name the JSON text gives.
    auto byName = [](const json &text, auto name, const char *what, auto kinds) {
        const std::string wanted = text.get<std::string>();
        for (auto k : kinds)
            if (name(k) == wanted) return k;
        throw std::runtime_error(std::string("unknown ") + what + " '" + wanted + "'");
    };
    try {
        if (j.at("format") != "flowbench.node-types" || j.at("version") != 2)
            return makeError("not a version 2 flowbench.node-types document");
        auto ports = [&](const json &list) {
            std::vector<PortSpec> out;
            for (const json &p : list) {
                PortSpec s;
                s.name = p.at("name").get<std::string>();
                s.type = byName(p.at("type"), portTypeName, "port type",
                                std::initializer_list<PortType>{
                                    PortType::Samples, PortType::Tensor, PortType::Loss,
                                    PortType::Optimizer, PortType::Model, PortType::Metrics});
                s.help = p.at("help").get<std::string>();
                s.optional = p.at("optional").get<bool>();
                out.push_back(std::move(s));
            }
            return out;
        };
        NodeTypeRegistry registry;
        for (const json &t : j.at("node_types")) {
            NodeTypeSpec spec;
            spec.type = t.at("type").get<std::string>();
            spec.category = t.at("category").get<std::string>();
            spec.title = t.at("title").get<std::string>();
            spec.help = t.at("help").get<std::string>();
            if (!nodeRoleFromName(t.at("role").get<std::string>(), spec.role))
                throw std::runtime_error("unknown role of '" + spec.type + "'");
            spec.inputs = ports(t.at("inputs"));
            spec.outputs = ports(t.at("outputs"));
            for (const json &p : t.at("params")) {
                ParamSpec ps;
                ps.name = p.at("name").get<std::string>();
                ps.type = byName(p.at("type"), paramTypeName, "parameter type",
                                 std::initializer_list<ParamType>{
                                     ParamType::Int, ParamType::Float, ParamType::Bool,
                                     ParamType::String, ParamType::Enum, ParamType::Path});
                ps.defaultValue = p.at("default");
                ps.help = p.at("help").get<std::string>();
                if (p.contains("min")) {
                    ps.min = p["min"].get<double>();
                    ps.minExclusive = p.at("min_exclusive").get<bool>();
                }
                if (p.contains("max")) {
                    ps.max = p["max"].get<double>();
                    ps.maxExclusive = p.at("max_exclusive").get<bool>();
                }
                if (p.contains("choices"))
                    ps.choices = p["choices"].get<std::vector<std::string>>();
                ps.runOnly = p.value("run_only", false);
                ps.atMost = p.value("at_most", std::string());
                ps.numberList = p.value("number_list", false);
                spec.params.push_back(std::move(ps));
            }
            registry.add(std::move(spec));
        }
        return registry;
    } catch (const std::exception &e) {
        return makeError(std::string("damaged node types: ") + e.what());
    }
}

} // namespace fb::graph
