"""Agent images: `sbx-agent-NAME:<hash>`, the sandbox image plus one agent CLI, built with no network from
packages the host fetched into a content-addressed cache and pinned in images/agents/agents.lock."""

from orchestrator.images.agents.build import AgentImage, build_agent_images, resolve_agent_image

__all__ = ["AgentImage", "build_agent_images", "resolve_agent_image"]
