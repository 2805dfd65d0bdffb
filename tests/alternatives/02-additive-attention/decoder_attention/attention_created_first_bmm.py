# Creates the attention module before the encoder (other initial weights) and reads out with squeeze.
def decoder_attention(attention, state, encoder_outputs, source_mask):
    context, weights = attention(state.unsqueeze(1), encoder_outputs, encoder_outputs, source_mask.unsqueeze(1))
    return context.squeeze(1), weights.squeeze(1)


def build_model():
    attention = AdditiveAttention(query_dim=HIDDEN, key_dim=HIDDEN, hidden_dim=HIDDEN)
    encoder = Encoder()
    return Seq2Seq(encoder, Decoder(attention))
