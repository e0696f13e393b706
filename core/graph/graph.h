#pragma once

// The whole pipeline-document layer: node types, the document, its file format, --set
// overrides and validation.
#include "core/graph/diff.h"
#include "core/graph/document.h"
#include "core/graph/node_types.h"
#include "core/graph/pipeline_file.h"
#include "core/graph/settings.h"
#include "core/graph/validate.h"
