#include "core/graph/pipeline_file.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/json_nesting.h"
#include "core/base/safe_text.h"

namespace fb::graph {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// Line and column (1-based) of a parse error's byte offset; at the end of the text, the last
// non-blank character, so "unexpected end of input" points at the line where the text stops.
std::pair<int, int> errorPosition(std::string_view text, size_t offset)
{
    if (offset >= text.size()) {
        offset = text.size();
        while (offset > 0 && std::isspace(static_cast<unsigned char>(text[offset - 1])))
            --offset;
        if (offset > 0) --offset;
    }
    return lineAndColumn(text, offset);
}

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 2: why";
// keep "why": the position is reported our way.
std::string parseErrorReason(const json::parse_error &e)
{
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what.erase(0, p + 2);
    if (what.rfind("parse error", 0) == 0) {
        if (auto p = what.find(": "); p != std::string::npos) what.erase(0, p + 2);
    }
    return what;
}

std::string nodeLabel(size_t index, const std::string &id)
{
    std::string label = "nodes[" + std::to_string(index) + "]";
    if (!id.empty()) label += " (id '" + id + "')";
    return label;
}

std::string typeOf(const json &j)
{
    return j.type_name();
}

// "NODE.PORT" -> node, port. Node ids have no '.', so the first one separates them.
bool splitEndpoint(const std::string &text, std::string &node, std::string &port)
{
    auto dot = text.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == text.size()) return false;
    node = text.substr(0, dot);
    port = text.substr(dot + 1);
    return true;
}

// Integral positions are written as integers, so a file that had them round-trips unchanged.
ordered_json coordinate(double v)
{
    if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 9.0e15)
        return static_cast<long long>(v);
    return v;
}

} // namespace

Result<PipelineDocument> parsePipeline(std::string_view text, const std::string &sourceName)
{
    // Before nlohmann builds a tree: one nested a hundred thousand levels deep parses, but its
    // first copy (into a node's unknown fields) overflows the stack.
    FB_TRY(checkJsonNesting(text, sourceName));
    json root;
    try {
        root = json::parse(text.begin(), text.end());
    } catch (const json::parse_error &e) {
        auto [line, column] = errorPosition(text, e.byte > 0 ? e.byte - 1 : 0);
        return fileError(sourceName,
                         "not valid JSON (line " + std::to_string(line) + ", column " +
                             std::to_string(column) + "): " + safeText(parseErrorReason(e)),
                         line);
    } catch (const json::exception &e) {
        // Not a syntax error but a value nlohmann cannot hold, e.g. a number like 1e999.
        std::string what = e.what();
        if (auto p = what.find("] "); p != std::string::npos) what.erase(0, p + 2);
        return fileError(sourceName, "not valid JSON: " + safeText(what));
    }
    // Messages quote ids and values from the file as they are: safe to print (safeText).
    auto fail = [&](const std::string &message, std::string node = {}) {
        Error e = fileError(sourceName, safeText(message));
        e.node = std::move(node);
        return e;
    };

    if (!root.is_object())
        return fail("not a Flowbench pipeline: expected a JSON object, found " + typeOf(root));

    auto format = root.find("format");
    if (format == root.end())
        return fail(std::string("not a Flowbench pipeline: no \"format\" field (expected \"") +
                    kPipelineFormat + "\")");
    if (!format->is_string() || format->get<std::string>() != kPipelineFormat)
        return fail("not a Flowbench pipeline: \"format\" is " + jsonText(*format) +
                    ", expected \"" + kPipelineFormat + "\"");

    auto version = root.find("version");
    if (version == root.end()) return fail("no \"version\" field");
    if (!version->is_number_integer())
        return fail("\"version\" must be an integer, found " + jsonText(*version));
    if (version->is_number_unsigned() && version->get<unsigned long long>() > kPipelineVersion)
        return fail("written by a newer Flowbench (version " + jsonText(*version) +
                    "); this build reads version " + std::to_string(kPipelineVersion));
    if (version->get<long long>() != kPipelineVersion)
        return fail("unsupported version " + jsonText(*version) + "; this build reads version " +
                    std::to_string(kPipelineVersion));

    PipelineDocument doc;

    auto nodes = root.find("nodes");
    if (nodes == root.end()) return fail("no \"nodes\" array");
    if (!nodes->is_array()) return fail("\"nodes\" must be an array, found " + typeOf(*nodes));
    for (size_t i = 0; i < nodes->size(); ++i) {
        const json &jn = (*nodes)[i];
        if (!jn.is_object())
            return fail(nodeLabel(i, {}) + " must be an object, found " + typeOf(jn));
        Node node;
        auto id = jn.find("id");
        if (id == jn.end()) return fail(nodeLabel(i, {}) + " has no \"id\"");
        if (!id->is_string())
            return fail(nodeLabel(i, {}) + ": \"id\" must be a string, found " + jsonText(*id));
        node.id = id->get<std::string>();
        if (node.id.empty()) return fail(nodeLabel(i, {}) + ": \"id\" is empty");
        const std::string label = nodeLabel(i, node.id);

        auto type = jn.find("type");
        if (type == jn.end()) return fail(label + " has no \"type\"", node.id);
        if (!type->is_string())
            return fail(label + ": \"type\" must be a string, found " + jsonText(*type), node.id);
        node.type = type->get<std::string>();

        if (auto params = jn.find("params"); params != jn.end()) {
            if (!params->is_object())
                return fail(label + ": \"params\" must be an object, found " + typeOf(*params),
                            node.id);
            node.params = *params;
        }
        if (auto pos = jn.find("position"); pos != jn.end()) {
            if (!pos->is_array() || pos->size() != 2 || !(*pos)[0].is_number() ||
                !(*pos)[1].is_number())
                return fail(label + ": \"position\" must be [x, y] numbers, found " +
                                jsonText(*pos),
                            node.id);
            node.x = (*pos)[0].get<double>();
            node.y = (*pos)[1].get<double>();
        }
        for (auto it = jn.begin(); it != jn.end(); ++it) {
            const std::string &k = it.key();
            if (k != "id" && k != "type" && k != "params" && k != "position")
                node.extra[k] = it.value();
        }
        // Not addNode(): duplicate or malformed ids are for validate() to report with the rest.
        doc.m_nodes.push_back(std::move(node));
    }

    if (auto edges = root.find("edges"); edges != root.end()) {
        if (!edges->is_array()) return fail("\"edges\" must be an array, found " + typeOf(*edges));
        for (size_t i = 0; i < edges->size(); ++i) {
            const json &je = (*edges)[i];
            const std::string label = "edges[" + std::to_string(i) + "]";
            if (!je.is_object()) return fail(label + " must be an object, found " + typeOf(je));
            Edge edge;
            for (const char *key : {"from", "to"}) {
                auto end = je.find(key);
                if (end == je.end()) return fail(label + " has no \"" + key + "\"");
                bool from = key[0] == 'f';
                std::string &n = from ? edge.fromNode : edge.toNode;
                std::string &p = from ? edge.fromPort : edge.toPort;
                if (!end->is_string() || !splitEndpoint(end->get<std::string>(), n, p))
                    return fail(label + ": \"" + key + "\" must be \"NODE.PORT\", found " +
                                jsonText(*end));
            }
            for (auto it = je.begin(); it != je.end(); ++it)
                if (it.key() != "from" && it.key() != "to") edge.extra[it.key()] = it.value();
            doc.m_edges.push_back(std::move(edge));
        }
    }

    for (auto it = root.begin(); it != root.end(); ++it) {
        const std::string &k = it.key();
        if (k != "format" && k != "version" && k != "nodes" && k != "edges")
            doc.m_extra[k] = it.value();
    }

    // The file's key order, which `json` (a sorted map) forgets: read once more, in order, so
    // that saving writes the keys where the file had them and one changed value is one line.
    const ordered_json inOrder = ordered_json::parse(text.begin(), text.end(), nullptr, false);
    if (inOrder.is_object()) {
        for (auto it = inOrder.begin(); it != inOrder.end(); ++it)
            doc.m_keyOrder.push_back(it.key());
        const auto nodesInOrder = inOrder.find("nodes");
        if (nodesInOrder != inOrder.end() && nodesInOrder->is_array() &&
            nodesInOrder->size() == doc.m_nodes.size()) {
            for (size_t i = 0; i < doc.m_nodes.size(); ++i) {
                const ordered_json &jn = (*nodesInOrder)[i];
                Node &node = doc.m_nodes[i];
                for (auto it = jn.begin(); it != jn.end(); ++it)
                    node.keyOrder.push_back(it.key());
                if (auto p = jn.find("params"); p != jn.end() && p->is_object())
                    for (auto it = p->begin(); it != p->end(); ++it)
                        node.paramOrder.push_back(it.key());
            }
        }
    }
    return doc;
}

Result<PipelineDocument> loadPipeline(const std::string &path)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return fileError(path, "cannot read: it is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) return fileError(path, std::string("cannot open: ") + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return fileError(path, std::string("cannot read: ") + std::strerror(errno));
    return parsePipeline(text.str(), path);
}

// `fields` in the order a file had them (`order`), then the rest in the order given; the first
// `fixed` fields (the header: format and version, or a node's id and type) always lead.
ordered_json inOrder(std::vector<std::pair<std::string, ordered_json>> fields,
                     const std::vector<std::string> &order, size_t fixed = 0)
{
    ordered_json out = ordered_json::object();
    for (size_t i = 0; i < fixed && i < fields.size(); ++i)
        out[fields[i].first] = std::move(fields[i].second);
    for (const std::string &k : order)
        for (auto &[key, value] : fields)
            if (key == k && !out.contains(key)) out[key] = std::move(value);
    for (auto &[key, value] : fields)
        if (!out.contains(key)) out[key] = std::move(value);
    return out;
}

ordered_json pipelineJson(const PipelineDocument &doc)
{
    ordered_json nodes = ordered_json::array();
    for (const Node &n : doc.nodes()) {
        std::vector<std::pair<std::string, ordered_json>> params;
        if (n.params.is_object())
            for (auto it = n.params.begin(); it != n.params.end(); ++it)
                params.emplace_back(it.key(), ordered_json(it.value()));
        std::vector<std::pair<std::string, ordered_json>> fields{
            {"id", n.id},
            {"type", n.type},
            {"params", inOrder(std::move(params), n.paramOrder)},
            {"position", ordered_json::array({coordinate(n.x), coordinate(n.y)})}};
        if (n.extra.is_object()) {
            for (auto it = n.extra.begin(); it != n.extra.end(); ++it)
                if (it.key() != "id" && it.key() != "type" && it.key() != "params" &&
                    it.key() != "position")
                    fields.emplace_back(it.key(), ordered_json(it.value()));
        }
        nodes.push_back(inOrder(std::move(fields), n.keyOrder, 2));
    }

    ordered_json edges = ordered_json::array();
    for (const Edge &e : doc.edges()) {
        ordered_json je;
        je["from"] = e.fromNode + "." + e.fromPort;
        je["to"] = e.toNode + "." + e.toPort;
        if (e.extra.is_object()) {
            for (auto it = e.extra.begin(); it != e.extra.end(); ++it)
                if (!je.contains(it.key())) je[it.key()] = ordered_json(it.value());
        }
        edges.push_back(std::move(je));
    }

    std::vector<std::pair<std::string, ordered_json>> fields{{"format", kPipelineFormat},
                                                             {"version", kPipelineVersion}};
    std::vector<std::pair<std::string, ordered_json>> extras;
    if (doc.extra().is_object()) {
        for (auto it = doc.extra().begin(); it != doc.extra().end(); ++it)
            if (it.key() != "format" && it.key() != "version" && it.key() != "nodes" &&
                it.key() != "edges")
                extras.emplace_back(it.key(), ordered_json(it.value()));
    }
    fields.emplace_back("nodes", std::move(nodes));
    fields.emplace_back("edges", std::move(edges));
    for (auto &e : extras)
        fields.push_back(std::move(e));
    return inOrder(std::move(fields), doc.keyOrder(), 2);
}

std::string serializePipeline(const PipelineDocument &doc)
{
    // Replace, not throw: a --set value from the command line may hold invalid UTF-8.
    return pipelineJson(doc).dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

Status savePipeline(const PipelineDocument &doc, const std::string &path)
{
    const std::string text = serializePipeline(doc);
    auto failure = [&](const char *what) {
        return fileError(path, std::string(what) + ": " + std::strerror(errno));
    };

    // Same folder as the target, so rename() is atomic: the old file or the new, never half.
    std::string tmpl = path + ".tmp-XXXXXX";
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) return failure("cannot create a temporary file beside it");

    struct stat st;
    mode_t mode = (::stat(path.c_str(), &st) == 0) ? (st.st_mode & 07777) : 0644;
    ::fchmod(fd, mode);

    auto abandon = [&](const char *what) {
        Error e = failure(what);
        ::close(fd);
        ::unlink(tmpl.c_str());
        return e;
    };
    const char *p = text.data();
    size_t left = text.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return abandon("cannot write");
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0) return abandon("cannot sync");
    if (::close(fd) != 0) {
        Error e = failure("cannot write");
        ::unlink(tmpl.c_str());
        return e;
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        Error e = failure("cannot replace");
        ::unlink(tmpl.c_str());
        return e;
    }
    // Make the rename itself durable; a failure here leaves a good file, so it is not reported.
    std::string dir = std::filesystem::path(path).parent_path().string();
    int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return {};
}

} // namespace fb::graph
