#include "core/graph/validate.h"

#include "core/base/number_list.h"

#include <algorithm>
#include <sstream>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>

#include "core/base/safe_text.h"

namespace fb::graph {

using nlohmann::json;

namespace {

// An error whose message is safe to print: ids, port and parameter names and types come from the
// file as they are, and may hold control or bidirectional characters (safeText). The node field
// keeps the id as it is, so an editor can still find the node.
Error problem(std::string node, const std::string &message)
{
    return nodeError(std::move(node), safeText(message));
}

std::string joined(const std::vector<std::string> &items)
{
    std::string out;
    for (size_t i = 0; i < items.size(); ++i)
        out += (i ? ", " : "") + items[i];
    return out;
}

std::vector<std::string> portNames(const std::vector<PortSpec> &ports)
{
    std::vector<std::string> names;
    for (const PortSpec &p : ports)
        names.push_back(p.name);
    return names;
}

size_t editDistance(std::string_view a, std::string_view b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
            diag = up;
        }
    }
    return row[b.size()];
}

// " (did you mean 'flatten'?)" when one known name is close; typos are the usual cause.
std::string suggestion(std::string_view name, const std::vector<std::string> &known)
{
    const std::string *best = nullptr;
    size_t bestDistance = 3;
    for (const std::string &k : known) {
        size_t d = editDistance(name, k);
        if (d < bestDistance) {
            bestDistance = d;
            best = &k;
        }
    }
    return best ? " (did you mean '" + *best + "'?)" : std::string();
}

bool inRange(double v, double min, double max, const ParamSpec &spec)
{
    if (std::isfinite(min) && (spec.minExclusive ? v <= min : v < min)) return false;
    if (std::isfinite(max) && (spec.maxExclusive ? v >= max : v > max)) return false;
    return true;
}

// A float parameter is used as a float: 1e-50 is 0 and 1e39 is infinity there, though both pass
// a check made in double. So the value and the range's ends are rounded to float first (the
// ends too, so that a value typed as the documented end, 1e-06 say, is inside), then compared.
float asFloat(double v)
{
    return static_cast<float>(v);
}

std::string endpoint(const std::string &node, const std::string &port)
{
    return node + "." + port;
}

// Where an edge end lands, when its node and type are known.
struct End {
    const Node *node = nullptr;
    const NodeTypeSpec *spec = nullptr;
};

End resolve(const PipelineDocument &doc, const NodeTypeRegistry &registry, const std::string &id)
{
    End end;
    end.node = doc.node(id);
    if (end.node) end.spec = registry.find(end.node->type);
    return end;
}

// The port checks one edge needs; shared by validate() (all problems) and checkEdge() (first).
void checkEdgePorts(const PipelineDocument &doc, const NodeTypeRegistry &registry, const Edge &e,
                    std::vector<Error> &out)
{
    const std::string from = endpoint(e.fromNode, e.fromPort);
    const std::string to = endpoint(e.toNode, e.toPort);
    const std::string what = "edge " + e.str() + ": ";
    End src = resolve(doc, registry, e.fromNode);
    End dst = resolve(doc, registry, e.toNode);
    if (!src.node) out.push_back(problem(from, what + "there is no node '" + e.fromNode + "'"));
    if (!dst.node) out.push_back(problem(to, what + "there is no node '" + e.toNode + "'"));

    const PortSpec *out_ = nullptr;
    const PortSpec *in = nullptr;
    if (src.spec) {
        out_ = src.spec->output(e.fromPort);
        if (!out_ && src.spec->input(e.fromPort)) {
            out.push_back(problem(from, what + "starts at " + from +
                                            ", which is an input port; edges go from an "
                                            "output to an input"));
        } else if (!out_) {
            auto names = portNames(src.spec->outputs);
            out.push_back(problem(from, what + "node '" + e.fromNode + "' (" + src.spec->type +
                                            ") has no output port '" + e.fromPort + "'" +
                                            (names.empty() ? " (it has no outputs)"
                                                           : " (outputs: " + joined(names) + ")")));
        }
    }
    if (dst.spec) {
        in = dst.spec->input(e.toPort);
        if (!in && dst.spec->output(e.toPort)) {
            out.push_back(problem(to, what + "ends at " + to +
                                          ", which is an output port; edges go from an "
                                          "output to an input"));
        } else if (!in) {
            auto names = portNames(dst.spec->inputs);
            out.push_back(problem(to, what + "node '" + e.toNode + "' (" + dst.spec->type +
                                          ") has no input port '" + e.toPort + "'" +
                                          (names.empty() ? " (it has no inputs)"
                                                         : " (inputs: " + joined(names) + ")")));
        }
    }
    if (out_ && in && out_->type != in->type) {
        const std::string a(portTypeName(out_->type)), b(portTypeName(in->type));
        out.push_back(problem(to, what + "port types differ: " + from + " gives " + a + ", but " +
                                      to + " takes " + b));
    }
}

// Whether `target` is reachable from `start` along edges.
bool reaches(const PipelineDocument &doc, const std::string &start, const std::string &target)
{
    std::set<std::string> seen{start};
    std::deque<std::string> queue{start};
    while (!queue.empty()) {
        std::string id = queue.front();
        queue.pop_front();
        if (id == target) return true;
        for (const Edge *e : doc.edgesFrom(id))
            if (seen.insert(e->toNode).second) queue.push_back(e->toNode);
    }
    return false;
}

// One Error per strongly connected component that holds a cycle, naming the nodes along one
// cycle through its first node (in document order).
void findCycles(const PipelineDocument &doc, std::vector<Error> &out)
{
    // Node ids in document order, duplicates merged: edges name nodes by id.
    std::vector<std::string> ids;
    std::map<std::string, int> index;
    for (const Node &n : doc.nodes())
        if (index.emplace(n.id, static_cast<int>(ids.size())).second) ids.push_back(n.id);
    const int count = static_cast<int>(ids.size());
    std::vector<std::vector<int>> next(count);
    for (const Edge &e : doc.edges()) {
        auto a = index.find(e.fromNode), b = index.find(e.toNode);
        if (a == index.end() || b == index.end()) continue;
        auto &list = next[a->second];
        if (std::find(list.begin(), list.end(), b->second) == list.end()) list.push_back(b->second);
    }

    // Tarjan's strongly connected components.
    std::vector<int> order(count, -1), low(count, 0), component(count, -1);
    std::vector<bool> onStack(count, false);
    std::vector<int> stack;
    int counter = 0, components = 0;
    std::function<void(int)> visit = [&](int v) {
        order[v] = low[v] = counter++;
        stack.push_back(v);
        onStack[v] = true;
        for (int w : next[v]) {
            if (order[w] < 0) {
                visit(w);
                low[v] = std::min(low[v], low[w]);
            } else if (onStack[w]) {
                low[v] = std::min(low[v], order[w]);
            }
        }
        if (low[v] == order[v]) {
            int w;
            do {
                w = stack.back();
                stack.pop_back();
                onStack[w] = false;
                component[w] = components;
            } while (w != v);
            ++components;
        }
    };
    for (int v = 0; v < count; ++v)
        if (order[v] < 0) visit(v);

    std::vector<bool> reported(components, false);
    for (int s = 0; s < count; ++s) {
        const int c = component[s];
        if (reported[c]) continue;
        // Shortest way from s back to s inside its component (breadth first).
        std::vector<int> parent(count, -1);
        std::deque<int> queue;
        bool closed = false;
        for (int w : next[s]) {
            if (component[w] != c) continue;
            if (w == s) {
                closed = true;
                break;
            }
            if (parent[w] < 0) {
                parent[w] = s;
                queue.push_back(w);
            }
        }
        int last = s; // the node whose edge closes the cycle
        while (!closed && !queue.empty()) {
            int v = queue.front();
            queue.pop_front();
            for (int w : next[v]) {
                if (component[w] != c) continue;
                if (w == s) {
                    closed = true;
                    last = v;
                    break;
                }
                if (parent[w] < 0) {
                    parent[w] = v;
                    queue.push_back(w);
                }
            }
        }
        if (!closed) continue; // a single node without a self-loop
        reported[c] = true;
        std::vector<std::string> path;
        for (int v = last; v != s; v = parent[v])
            path.push_back(ids[v]);
        path.push_back(ids[s]);
        std::reverse(path.begin(), path.end());
        std::string text;
        for (const std::string &id : path)
            text += id + " -> ";
        text += ids[s];
        out.push_back(problem(ids[s], "cycle: " + text +
                                          "; a pipeline must not loop back "
                                          "on itself"));
    }
}

} // namespace

Status checkParamValue(const ParamSpec &spec, const json &value, std::string_view nodeId)
{
    const std::string where = std::string(nodeId) + "." + spec.name;
    auto wrongType = [&](const char *expected) {
        return problem(where, where + " expects " + expected + ", got " + jsonText(value));
    };
    switch (spec.type) {
    case ParamType::Int:
        if (!value.is_number_integer()) return wrongType("an integer");
        if (value.is_number_unsigned() &&
            value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
            return problem(where, where + " = " + jsonText(value) + " is too large");
        break;
    case ParamType::Float:
        if (!value.is_number()) return wrongType("a number");
        break;
    case ParamType::Bool:
        if (!value.is_boolean()) return wrongType("true or false");
        break;
    case ParamType::String:
        if (!value.is_string()) return wrongType("a string");
        break;
    case ParamType::Path:
        if (!value.is_string()) return wrongType("a path (a string)");
        break;
    case ParamType::Enum:
        if (!value.is_string()) return wrongType(("one of: " + joined(spec.choices)).c_str());
        break;
    }
    if (value.is_number()) {
        double v = value.get<double>(), min = spec.min, max = spec.max;
        if (spec.type == ParamType::Float) {
            v = asFloat(v);
            min = asFloat(min);
            max = asFloat(max);
        }
        if (!inRange(v, min, max, spec))
            return problem(where, where + " = " + jsonText(value) +
                                      " is out of range; allowed: " + spec.rangeText());
        if (!std::isfinite(v)) {
            return problem(where, where + " = " + jsonText(value) +
                                      " is too large for a float (at most about 3.4e38)");
        }
    }
    if (spec.type == ParamType::Enum) {
        const std::string s = value.get<std::string>();
        if (std::find(spec.choices.begin(), spec.choices.end(), s) == spec.choices.end())
            return problem(where, where + " = " + jsonText(value) +
                                      " is not one of: " + joined(spec.choices));
    }
    if (spec.numberList && value.is_string()) {
        // Every number of the list within the range, as a float (as the engine reads them).
        auto numbers = parseNumberList(value.get<std::string>());
        if (!numbers.ok())
            return problem(where, where + " = " + jsonText(value) + ": " + numbers.error().message);
        for (float v : numbers.value())
            if (!std::isfinite(v) || !inRange(v, asFloat(spec.min), asFloat(spec.max), spec))
                return problem(where, where + " = " + jsonText(value) + ": " +
                                          (std::ostringstream() << v).str() +
                                          " is out of range; allowed: " + spec.rangeText());
    }
    return {};
}

std::vector<Error> validate(const PipelineDocument &doc, const NodeTypeRegistry &registry)
{
    std::vector<Error> errors;
    std::vector<std::string> typeNames;
    for (const NodeTypeSpec &t : registry.all())
        typeNames.push_back(t.type);

    // Nodes: ids, types, parameters.
    std::map<std::string, size_t> firstIndex;
    const auto &nodes = doc.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node &n = nodes[i];
        if (!isValidNodeId(n.id)) {
            errors.push_back(problem(n.id, "invalid node id '" + n.id +
                                               "': use only letters, digits, '_' and '-'"));
        }
        auto [it, fresh] = firstIndex.emplace(n.id, i);
        if (!fresh) {
            errors.push_back(problem(n.id, "duplicate node id '" + n.id + "' (nodes[" +
                                               std::to_string(it->second) + "] and nodes[" +
                                               std::to_string(i) + "])"));
        }
        const NodeTypeSpec *spec = registry.find(n.type);
        if (!spec) {
            errors.push_back(problem(n.id, "unknown node type '" + n.type + "'" +
                                               suggestion(n.type, typeNames)));
            continue;
        }
        if (!n.params.is_object()) {
            errors.push_back(problem(n.id, "parameters must be a JSON object"));
            continue;
        }
        for (auto p = n.params.begin(); p != n.params.end(); ++p) {
            const ParamSpec *ps = spec->param(p.key());
            if (!ps) {
                std::vector<std::string> names;
                for (const ParamSpec &q : spec->params)
                    names.push_back(q.name);
                errors.push_back(problem(n.id + "." + p.key(),
                                         "unknown parameter '" + p.key() + "' for node type " +
                                             spec->type + suggestion(p.key(), names) +
                                             (names.empty() ? "; it has no parameters"
                                                            : "; parameters: " + joined(names))));
                continue;
            }
            Status s = checkParamValue(*ps, p.value(), n.id);
            if (!s.ok()) errors.push_back(s.error());
        }
        // Rules between parameters of one node.
        for (const ParamSpec &ps : spec->params) {
            if (ps.atMost.empty()) continue;
            const json lo = doc.param(n.id, ps.name, registry);
            const json hi = doc.param(n.id, ps.atMost, registry);
            if (lo.is_number() && hi.is_number() && lo.get<double>() > hi.get<double>())
                errors.push_back(problem(n.id + "." + ps.name, ps.name + " (" + lo.dump() +
                                                                   ") is above " + ps.atMost +
                                                                   " (" + hi.dump() + ")"));
        }
    }

    // Edges: ends, directions, types.
    for (const Edge &e : doc.edges())
        checkEdgePorts(doc, registry, e, errors);

    // Inputs: at most one edge each, and every required one connected.
    std::map<std::pair<std::string, std::string>, std::vector<const Edge *>> into;
    for (const Edge &e : doc.edges())
        into[{e.toNode, e.toPort}].push_back(&e);
    for (const Node &n : nodes) {
        const NodeTypeSpec *spec = registry.find(n.type);
        if (!spec || firstIndex[n.id] != static_cast<size_t>(&n - nodes.data())) continue;
        for (const PortSpec &port : spec->inputs) {
            const std::string where = endpoint(n.id, port.name);
            auto it = into.find({n.id, port.name});
            if (it == into.end()) {
                if (!port.optional) {
                    errors.push_back(problem(where, "required input " + where + " (" +
                                                        std::string(portTypeName(port.type)) +
                                                        ") is not connected"));
                }
            } else if (it->second.size() > 1) {
                std::vector<std::string> sources;
                for (const Edge *e : it->second)
                    sources.push_back(endpoint(e->fromNode, e->fromPort));
                errors.push_back(problem(
                    where, "input " + where + " has " + std::to_string(sources.size()) +
                               " edges (from " + joined(sources) + "); an input takes one"));
            }
        }
    }

    findCycles(doc, errors);
    return errors;
}

Status checkEdge(const PipelineDocument &doc, const Edge &edge, const NodeTypeRegistry &registry)
{
    std::vector<Error> errors;
    checkEdgePorts(doc, registry, edge, errors);
    if (!errors.empty()) return errors.front();
    const std::string to = endpoint(edge.toNode, edge.toPort);
    for (const Edge &e : doc.edges()) {
        if (e.sameEnds(edge)) return problem(to, "edge " + edge.str() + " already exists");
        if (e.toNode == edge.toNode && e.toPort == edge.toPort) {
            return problem(to, "input " + to + " is already connected (from " +
                                   endpoint(e.fromNode, e.fromPort) + ")");
        }
    }
    if (edge.fromNode == edge.toNode || reaches(doc, edge.toNode, edge.fromNode)) {
        return problem(to, "edge " + edge.str() + " would make a cycle");
    }
    return {};
}

} // namespace fb::graph
