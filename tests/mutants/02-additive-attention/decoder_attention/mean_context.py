# Averages the encoder outputs instead of attending: a fixed context for every step.
def decoder_attention(attention, state, encoder_outputs, source_mask):
    weights = source_mask.float() / source_mask.float().sum(dim=-1, keepdim=True)
    return (weights[:, :, None] * encoder_outputs).sum(dim=1), weights


def build_model():
    return Seq2Seq(Encoder(), Decoder(AdditiveAttention(HIDDEN, HIDDEN, HIDDEN)))
