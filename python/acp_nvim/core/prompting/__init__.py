"""What a prompt carries besides its text: attachments (line ranges, @mentioned files), images and
audio (``media.py``), and an image from the system clipboard (``clipboard.py``).
"""
