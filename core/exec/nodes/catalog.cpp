// Every built-in node type, registered once, in palette order: a new type is a new file in this
// folder and one line here.

#include "core/exec/nodes/catalog.h"

#include "core/exec/node_type.h"

namespace fb::exec {

const NodeCatalog &nodeCatalog()
{
    static const NodeCatalog catalog = [] {
        NodeCatalog c;
        nodes::addDataSources(c);
        nodes::addPreprocessing(c);
        nodes::addImageAugmentation(c);
        nodes::addAudioFeatures(c);
        nodes::addAudioAugmentation(c);
        nodes::addModelLayers(c);
        nodes::addSilu(c);
        nodes::addGlobalAvgPool(c);
        nodes::addBatchNorm1d(c);
        nodes::addTraining(c);
        return c;
    }();
    return catalog;
}

} // namespace fb::exec
