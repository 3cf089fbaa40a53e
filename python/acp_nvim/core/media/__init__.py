"""What the agent sends besides text: resource links, embedded resources, images and audio, each shown
as one readable line in the chat and opened from it (``:help acp_nvim-media``)."""
