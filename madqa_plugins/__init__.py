"""Built-in madqa plugins: ordinary plugins written against madqa's public API.

One subpackage per family (``whoosh``, ``tantivy``, ``dense``, ``milvus``, ``readers``, ``strategies``,
``offline``, ``litellm``), each holding the module that registers hooks and its helpers; ``text`` holds what
several retrievers share. The map is in docs/plugins-reference.md; ``madqa.plugins.BUILTIN_PLUGINS`` lists the modules
registered.
"""
