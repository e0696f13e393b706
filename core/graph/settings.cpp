#include "core/graph/settings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "core/base/safe_text.h"
#include "core/graph/validate.h"

namespace fb::graph {

namespace {

// The node id, parameter name and value come from a command line as they were typed, so the
// message is made safe to print (safeText); the node field keeps them as they are.
Error problem(std::string node, const std::string &message)
{
    return nodeError(std::move(node), safeText(message));
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::string lowered(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// The whole text must be the number: "12abc" is not 12.
template <class T> bool parseNumber(std::string_view text, T &value)
{
    text = trimmed(text);
    if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
    if (text.empty()) return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

} // namespace

Status applySetting(PipelineDocument &doc, std::string_view assignment,
                    const NodeTypeRegistry &registry)
{
    const std::string text(assignment);
    const auto eq = text.find('=');
    const auto dot = text.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 ||
        dot + 1 == eq) {
        return makeError(safeText("expected NODE.PARAM=VALUE, got '" + text + "'"));
    }
    const std::string nodeId = text.substr(0, dot);
    const std::string name = text.substr(dot + 1, eq - dot - 1);
    const std::string_view raw = std::string_view(text).substr(eq + 1);
    const std::string where = nodeId + "." + name;

    const Node *node = doc.node(nodeId);
    if (!node) return problem(nodeId, "there is no node '" + nodeId + "' in the pipeline");
    const NodeTypeSpec *spec = registry.find(node->type);
    if (!spec) {
        return problem(nodeId, "node '" + nodeId + "' has unknown type '" + node->type +
                                   "', so its parameters are unknown too");
    }
    const ParamSpec *param = spec->param(name);
    if (!param) {
        std::string names;
        for (const ParamSpec &p : spec->params)
            names += (names.empty() ? "" : ", ") + p.name;
        return problem(where, "node type " + spec->type + " has no parameter '" + name + "'" +
                                  (names.empty() ? "" : " (parameters: " + names + ")"));
    }

    nlohmann::json value;
    switch (param->type) {
    case ParamType::Int: {
        long long v = 0;
        if (!parseNumber(raw, v))
            return problem(where, where + " expects an integer, got '" + std::string(raw) + "'");
        value = v;
        break;
    }
    case ParamType::Float: {
        double v = 0;
        if (!parseNumber(raw, v) || !std::isfinite(v))
            return problem(where, where + " expects a number, got '" + std::string(raw) + "'");
        value = v;
        break;
    }
    case ParamType::Bool: {
        const std::string s = lowered(trimmed(raw));
        if (s == "true" || s == "1")
            value = true;
        else if (s == "false" || s == "0")
            value = false;
        else
            return problem(where, where + " expects true or false (or 1 or 0), got '" +
                                      std::string(raw) + "'");
        break;
    }
    case ParamType::String:
    case ParamType::Enum:
    case ParamType::Path:
        value = std::string(raw);
        break;
    }
    FB_TRY(checkParamValue(*param, value, nodeId));
    return doc.setParam(nodeId, name, std::move(value));
}

} // namespace fb::graph
